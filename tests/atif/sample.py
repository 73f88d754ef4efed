"""Write an ATIF trajectory built with ATIF's reference models (PyPI `harbor`,
harbor.models.trajectories), as another tool would write one, for `cairn import` to read.

Run by tests/cli/export.rs:
    sample.py <out.atif.json>
The trajectory: a person's prompt, an agent step that talks and calls a tool (with its observed
result), a system note, and a second prompt with an answer given as content parts.
"""

import sys

from harbor.models.trajectories import (
    Agent,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
)


def main(path):
    trajectory = Trajectory(
        schema_version="ATIF-v1.4",
        session_id="harbor-sample-1",
        agent=Agent(name="terminus", version="2.0", model_name="model-x"),
        steps=[
            Step(step_id=1, timestamp="2026-03-01T10:00:00Z", source="user", message="List the files, please."),
            Step(
                step_id=2,
                timestamp="2026-03-01T10:00:05Z",
                source="agent",
                message="I will run ls.",
                reasoning_content="The user wants a listing.",
                tool_calls=[ToolCall(tool_call_id="call-1", function_name="bash", arguments={"command": "ls"})],
                observation=Observation(
                    results=[ObservationResult(source_call_id="call-1", content="README.md\nsrc\n")]
                ),
            ),
            Step(step_id=3, timestamp="2026-03-01T10:00:06Z", source="system", message="Context was trimmed."),
            Step(step_id=4, timestamp="2026-03-01T10:01:00Z", source="user", message="Thanks. What is in src?"),
            Step(step_id=5, timestamp="2026-03-01T10:01:02Z", source="agent", message="src holds main.rs."),
        ],
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(trajectory.model_dump_json(exclude_none=True))


if __name__ == "__main__":
    main(sys.argv[1])
