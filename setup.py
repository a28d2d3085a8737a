"""The one compiled part of babysit; everything else is in pyproject.toml.

The redraw collapse of babysit/parsing/redraws.py, in C. It is optional: where it
cannot be built (no C compiler), babysit installs and runs the same, on the Python
version of it."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("babysit.parsing._redraws", ["babysit/parsing/_redraws.c"],
                             optional=True)])
