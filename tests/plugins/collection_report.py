"""A pytest plugin for runs of a generated project's tests (helpers.run_project_tests): writes what the
run collected, once deselection is done, to the JSON file named by OPGEN_COLLECTION_REPORT:
{"collected": [node ids], "conditional": [those with a skip or skipif mark]}. One run thus gives
what two `--collect-only` runs gave before it (each a full collection: 8-13 s for a project).

Loaded with `-p collection_report`, this folder on PYTHONPATH (helpers.run_collecting)."""
from __future__ import annotations

import json
import os


def pytest_collection_finish(session) -> None:
    path = os.environ.get("OPGEN_COLLECTION_REPORT")
    if not path:
        return
    conditional = [item.nodeid for item in session.items
                   if any(mark.name in ("skip", "skipif") for mark in item.iter_markers())]
    with open(path, "w") as f:
        json.dump({"collected": [item.nodeid for item in session.items], "conditional": conditional}, f)
