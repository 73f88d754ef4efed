"""Validate ATIF trajectories with ATIF's reference models (PyPI `harbor`,
harbor.models.trajectories.Trajectory), installed into .venv/ by scripts/setup.sh.

Run by tests/cli/export.rs:
    validate.py <file.atif.json> [<file> ...]
Prints one JSON line: {"valid": N, "steps": [...], "schema_versions": [...], "subagents": [...]}
(the embedded sub-agent trajectories of each file, each validated as a whole trajectory); exits non-zero with
the model's error and the file's name on the first file that does not validate.
"""

import json
import sys

from harbor.models.trajectories import Trajectory


def main(paths):
    steps, versions, subagents = [], [], []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            t = Trajectory.model_validate_json(text)
        except Exception as e:  # pydantic.ValidationError, or JSON that does not parse
            print(f"FAIL: {path}: {e}", file=sys.stderr)
            sys.exit(1)
        steps.append(len(t.steps))
        versions.append(t.schema_version)
        subagents.append([len(s.steps) for s in t.subagent_trajectories or []])
    print(json.dumps({"valid": len(paths), "steps": steps, "schema_versions": versions, "subagents": subagents}))


if __name__ == "__main__":
    main(sys.argv[1:])
