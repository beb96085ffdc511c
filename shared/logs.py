"""One log format for every process, so interleaved output of `deepresearch up` reads well."""

from __future__ import annotations

import logging
import os


def configure_logging(level: str = "INFO") -> None:
    name = os.environ.get("RESEARCH_PROCESS_NAME", "")
    prefix = f"{name} " if name else ""
    logging.basicConfig(
        level=level.upper(),
        format=f"%(asctime)s {prefix}%(levelname)s %(name)s: %(message)s",
        force=True,
    )
