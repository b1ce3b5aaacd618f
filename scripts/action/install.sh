#!/bin/sh
# The Action's first step: install pairbench from the Action's own copy of the repository
# ($GITHUB_ACTION_PATH: the tag or commit the workflow's `uses:` names) into a virtual
# environment of its own under $RUNNER_TEMP. Nothing is taken from a package index by the name
# pairbench. The extra postgresql (psycopg) is added when $PAIRBENCH_STORE is a PostgreSQL URL.
#
# Environment: GITHUB_ACTION_PATH, RUNNER_TEMP, PAIRBENCH_ACTION_PYTHON (the interpreter, Python
# 3.10 or newer), PAIRBENCH_STORE (optional; only its scheme is read), GITHUB_OUTPUT, GITHUB_PATH.
# Outputs: python (the environment's interpreter) and bin (its bin directory, also added to the
# PATH of the job's later steps, so that they can run pairbench).
set -eu
source_tree="${GITHUB_ACTION_PATH:?the directory of the Action}"
venv="${RUNNER_TEMP:?a scratch directory}/pairbench-venv"
python="${PAIRBENCH_ACTION_PYTHON:-python3}"

case "${PAIRBENCH_STORE:-}" in
    postgres://*|postgresql://*|postgresql+*) requirement="${source_tree}[postgresql]" ;;
    *) requirement="$source_tree" ;;
esac
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "::error::pairbench needs Python 3.10 or newer; $python is $("$python" --version 2>&1) (add actions/setup-python before this Action, or set its input python)"
    exit 2
fi
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$requirement"
"$venv/bin/pairbench" --version
{
    echo "python=$venv/bin/python"
    echo "bin=$venv/bin"
} >> "${GITHUB_OUTPUT:?}"
echo "$venv/bin" >> "${GITHUB_PATH:?}"
