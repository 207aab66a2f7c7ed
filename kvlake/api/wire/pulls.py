"""Wire models of pull requests (lakeFS's pulls API)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from kvlake.api.wire.common import Name, Pagination, Request, Text


class PullRequestCreation(Request):
    title: Text
    source_branch: Name
    destination_branch: Name
    description: Text | None = None


class PullRequestCreationResponse(msgspec.Struct, frozen=True, kw_only=True):
    id: str


class PullRequestBasic(Request):
    """updatePullRequest's body: the fields to change."""

    status: Literal["open", "closed", "merged"] | None = None
    title: Text | None = None
    description: Text | None = None


class PullRequest(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    status: str
    title: str
    description: str
    creation_date: datetime
    author: str
    source_branch: str
    destination_branch: str
    merged_commit_id: str | None = None
    closed_date: datetime | None = None


class PullRequestsList(msgspec.Struct, frozen=True, kw_only=True):
    pagination: Pagination
    results: list[PullRequest]
