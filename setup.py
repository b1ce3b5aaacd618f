"""The build step pyproject.toml cannot declare: compile the native spawner.

``build_spawner`` compiles ``src/pairbench/measure/spawner.c`` into
``pairbench/measure/pairbench-spawner`` with the system's C compiler (see
``pairbench.measure.native``): into the build directory for ``pip install .``,
into the source tree for ``pip install -e .`` (setuptools sets
``editable_mode``). Without a compiler it says so and the install goes on;
pairbench then runs commands from its Python spawner.

A wheel that holds the spawner is tagged for its platform alone
(``py3-none-linux_x86_64``): the program is a standalone executable, not a
Python extension, so any Python 3 of that platform can run it. A wheel built
without a compiler holds none and is pure (``py3-none-any``).
"""

import importlib.util
import logging
import os

from setuptools import Command, Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build import build

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.join("pairbench", "measure")


def _native():
    """``pairbench.measure.native``, loaded by path: pairbench is not installed yet."""
    spec = importlib.util.spec_from_file_location(
        "_pairbench_native", os.path.join(HERE, "src", PACKAGE_DIR, "native.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


native = _native()


class build_spawner(Command):
    """Compile the native spawner with the system's C compiler, if there is one."""

    description = "compile pairbench's native spawner (pairbench-spawner) with the system's C compiler"
    user_options = []

    def initialize_options(self):
        self.build_lib = None
        self.editable_mode = False

    def finalize_options(self):
        self.set_undefined_options("build_py", ("build_lib", "build_lib"))

    def _source(self):
        return os.path.join(HERE, "src", PACKAGE_DIR, native.SOURCE)

    def _target(self):
        base = os.path.join(HERE, "src") if self.editable_mode else self.build_lib
        return os.path.join(base, PACKAGE_DIR, native.PROGRAM)

    def run(self):
        problem = native.build(self._source(), self._target())
        if problem:
            self.warn(f"pairbench: the native spawner was not built ({problem}); pairbench will run "
                      "commands from its Python spawner (max RSS is then reported from ~13 MiB)")
        else:
            self.announce(f"pairbench: built {self._target()}", logging.INFO)

    def get_source_files(self):
        return ["src/pairbench/measure/" + native.SOURCE]  # relative, as the manifest wants

    def get_outputs(self):
        target = self._target()
        return [target] if os.path.exists(target) else []

    def get_output_mapping(self):
        return {}


class build_with_spawner(build):
    sub_commands = [*build.sub_commands, ("build_spawner", None)]


class PlatformDistribution(Distribution):
    """A wheel that may hold a compiled program is not pure Python (installed in platlib)."""

    def has_ext_modules(self):
        return True


class bdist_wheel_spawner(bdist_wheel):
    """Tag the wheel by what it holds: the platform alone with the spawner, any without."""

    def get_tag(self):
        platform = super().get_tag()[2]
        built = self.get_finalized_command("build_spawner").get_outputs()
        return ("py3", "none", platform) if built else ("py3", "none", "any")


setup(cmdclass={"build": build_with_spawner, "build_spawner": build_spawner, "bdist_wheel": bdist_wheel_spawner},
      distclass=PlatformDistribution)
