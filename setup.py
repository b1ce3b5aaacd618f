"""The build step pyproject.toml cannot declare: compile the native spawner.

``build_spawner`` compiles ``src/pairbench/measure/spawner.c`` into
``pairbench/measure/pairbench-spawner`` with the system's C compiler (see
``pairbench.measure.native``): into the build directory for ``pip install .``,
into the source tree for ``pip install -e .`` (setuptools sets
``editable_mode``). Without a compiler it says so and the install goes on;
pairbench then runs commands from its Python spawner.

A wheel that holds the spawner is tagged for its platform alone: the program
is a standalone executable, not a Python extension, so any Python 3 of that
platform can run it. Linked statically (``pairbench.measure.native`` tries that
first), it needs no shared library at all, only a Linux kernel of 3.2 or later
(glibc's floor for a static program), so the wheel is tagged
``py3-none-manylinux_2_17_ARCH.manylinux2014_ARCH``: manylinux2014's CentOS 7
has kernel 3.10 (``auditwheel show`` agrees, in tests/package). Linked
dynamically it needs the build machine's C library and keeps the plain
``linux_ARCH`` tag, which installs here but is not one to publish. A wheel
built without a compiler holds none and is pure (``py3-none-any``).
"""

import importlib.util
import logging
import os
import struct

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

    def _library(self):
        base = os.path.join(HERE, "src") if self.editable_mode else self.build_lib
        return os.path.join(base, "pairbench", "worker", native.COUNTING_LIBRARY)

    def run(self):
        problem = native.build(self._source(), self._target())
        if problem:
            self.warn(f"pairbench: the native spawner was not built ({problem}); pairbench will run "
                      "commands from its Python spawner (max RSS is then reported from ~13 MiB)")
        else:
            self.announce(f"pairbench: built {self._target()}", logging.INFO)
        source = os.path.join(HERE, "src", "pairbench", "worker", native.COUNTING_SOURCE)
        missing = native.build_library(source, self._library())
        if missing:
            self.warn(f"pairbench: the Python worker's counting library was not built ({missing}); "
                      "Python benchmarks cannot be counted under Callgrind")

    def get_source_files(self):
        return ["src/pairbench/measure/" + native.SOURCE,  # relative, as the manifest wants
                "src/pairbench/worker/" + native.COUNTING_SOURCE]

    def get_outputs(self):
        return [path for path in (self._target(), self._library()) if os.path.exists(path)]

    def get_output_mapping(self):
        return {}


class build_with_spawner(build):
    sub_commands = [*build.sub_commands, ("build_spawner", None)]


class PlatformDistribution(Distribution):
    """A wheel that may hold a compiled program is not pure Python (installed in platlib)."""

    def has_ext_modules(self):
        return True


MANYLINUX = "manylinux_2_17_{arch}.manylinux2014_{arch}"
PT_INTERP, PT_DYNAMIC = 3, 2


def is_static_elf(path):
    """Whether ``path`` is an ELF executable with no program interpreter and no dynamic section (a
    statically linked program: it loads no shared library). Reads the ELF header and program headers
    (the ELF specification's layout, 32 and 64 bits, either byte order)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 52 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
            return False
        wide, order = head[4] == 2, "<" if head[5] == 1 else ">"
        offset, size, count = (struct.unpack_from(order + "Q", head, 32)[0], *struct.unpack_from(order + "HH", head, 54)) \
            if wide else (struct.unpack_from(order + "I", head, 28)[0], *struct.unpack_from(order + "HH", head, 42))
        if count > 4096 or size < 4:
            return False
        f.seek(offset)
        table = f.read(size * count)
    types = [struct.unpack_from(order + "I", table, i * size)[0] for i in range(len(table) // size)]
    return len(types) == count and PT_INTERP not in types and PT_DYNAMIC not in types


class bdist_wheel_spawner(bdist_wheel):
    """Tag the wheel by what it holds: manylinux with a static spawner, the platform alone with a
    dynamic one, any without."""

    def get_tag(self):
        platform = super().get_tag()[2]
        built = self.get_finalized_command("build_spawner").get_outputs()
        if not built:
            return ("py3", "none", "any")
        if platform.startswith("linux_") and is_static_elf(built[0]):
            return ("py3", "none", MANYLINUX.format(arch=platform.removeprefix("linux_")))
        return ("py3", "none", platform)


setup(cmdclass={"build": build_with_spawner, "build_spawner": build_spawner, "bdist_wheel": bdist_wheel_spawner},
      distclass=PlatformDistribution)
