"""The derivation code (schema parser, op model) of the project an op is added to: the project's own
<package>/_opgen, so what `opgen new` writes and what that project's build derives agree. Outside a
project (tests, --help) it is the template's copy beside this generator."""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

TEMPLATE_COPY = Path(__file__).resolve().parents[2] / "template" / "{{package_name}}" / "_opgen"


def load(folder: Path | None = None):
    """The _opgen package in `folder` (a project's <package>/_opgen), with its schema and model loaded."""
    folder = (folder or TEMPLATE_COPY).resolve()
    if not (folder / "model.py").is_file():
        raise FileNotFoundError(f"{folder} holds no op model (model.py)")
    name = f"_opgen_derivation_{abs(hash(str(folder)))}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                      submodule_search_locations=[str(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        for part in ("errors", "schema", "model", "declaration"):
            importlib.import_module(f"{name}.{part}")
    return sys.modules[name]
