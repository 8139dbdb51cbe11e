"""Teams: agents that share memory and messages, and workflows that run them as a DAG."""

from hugind.team.bus import BusLimits, TeamBus, TeamContext
from hugind.team.runner import TaskEvent, TaskRecord, TeamOptions, TeamResult, WorkflowRunner, run_workflow
from hugind.team.workflow import TaskSpec, Workflow, load_workflow, parse_workflow

__all__ = [
    "BusLimits",
    "TaskEvent",
    "TaskRecord",
    "TaskSpec",
    "TeamBus",
    "TeamContext",
    "TeamOptions",
    "TeamResult",
    "Workflow",
    "WorkflowRunner",
    "load_workflow",
    "parse_workflow",
    "run_workflow",
]
