"""What the API side of jobs (service.py) and the workflow steps (steps.py) both work through."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..services import Services
from .batch import BatchJobs
from .store import JobStore
from .workflow import Workflow


@dataclass
class JobContext:
    """The services, the job store and the two AWS facades (each has an in-memory twin for unit tests)."""

    services: Services
    store: JobStore
    workflow: Workflow
    batch: BatchJobs

    @property
    def settings(self) -> Any:
        return self.services.settings
