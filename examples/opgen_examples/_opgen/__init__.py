"""What an op's glue is derived from, and how: its declaration (`declare(...)` in <package>/ops/<op>.py)
read without running the module (declaration.py), the schema parser (schema.py), the op model every
derived piece reads (model.py), the C++ host code and kernel launches written into build/opgen/ on
every build (cpp.py, templates/), and the Python function, fake kernel and autograd registration made
on import (python.py).

Template-owned: `copier update` refreshes this folder, so a fix here reaches every declared op at the
next build. Stdlib and jinja2 (a torch dependency) only: setup.py, CMake and `opgen` load it by path,
without importing the package.
"""

# The template release this project is on (CHANGELOG.md of the template says what each one asks of you).
TEMPLATE_VERSION = "0.6.24"
# What `declare(...)` reads and the generator writes; `opgen` refuses a project whose API differs.
DECLARATION_API = 2
