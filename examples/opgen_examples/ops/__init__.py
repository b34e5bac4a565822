"""One module per op (written by `opgen new`); each registers its fake kernel and autograd formula.

Every module here is imported (only the JIT-built ones under OPGEN_JIT=a,b), and the names in its
__all__ are re-exported.
"""
import importlib
import pkgutil

from .. import loaded_ops

__all__: list = []

for _module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if loaded_ops is not None and _module_info.name not in loaded_ops:
        continue
    _module = importlib.import_module(f"{__name__}.{_module_info.name}")
    for _name in getattr(_module, "__all__", ()):
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)
