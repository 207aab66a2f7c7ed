"""Remove the line that guards each invariant, one at a time, and check that a test fails.

A test suite that still passes when the code upholding an invariant is gone
proves nothing about it. Each entry below names an invariant (DESIGN.md's
numbers, or the issue that asked for the guard), the exact code that guards it,
what to put in its place, and the tests that must then fail. Every mutation is
applied to a fresh copy of the tracked files in a temporary folder (the
working tree is never touched) and the named tests run there; the script
prints a line per mutation and exits 1 if any mutation survived (its tests all
passed) or no longer applies (the guarded code changed: update the entry).

    .venv/bin/python scripts/mutation_check.py            # every mutation
    .venv/bin/python scripts/mutation_check.py -k writer  # those whose name has "writer"
    make mutations

PostgreSQL-parametrized tests run too when `KVLAKE_TEST_POSTGRES_DSN` reaches a server.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutation:
    name: str
    guards: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


MUTATIONS = (
    Mutation(
        "repository-active-check",
        "invariant 1: only an active repository is usable",
        "kvlake/graveler/lifecycle/repositories.py",
        '        if repository.state == "active":\n            return repository\n',
        "        return repository\n",
        ("tests/graveler/test_repositories.py",),
    ),
    Mutation(
        "writer-re-read",
        "invariant 2: a write re-reads the branch and writes again after a seal",
        "kvlake/graveler/staging/writer.py",
        "            current = self._refs.load_branch(repository, branch)[0]\n"
        "            if current.staging_token == token:\n"
        "                return\n",
        "            return\n",
        ("tests/graveler/test_writer.py::test_a_commit_at_any_point_of_a_write_loses_nothing",),
    ),
    Mutation(
        "writer-re-read-interleaved",
        "invariant 2, found by the interleaving harness rather than a hand-placed pause",
        "kvlake/graveler/staging/writer.py",
        "            current = self._refs.load_branch(repository, branch)[0]\n"
        "            if current.staging_token == token:\n"
        "                return\n",
        "            return\n",
        (
            "tests/interleavings/test_lake.py"
            "::test_no_interleaving_loses_a_write_or_a_referenced_blob[local-upload and commit]",
        ),
    ),
    Mutation(
        "writer-re-read-through-http",
        "invariant 2 (issue 9 defect 6), found by the harness driving HTTP requests",
        "kvlake/graveler/staging/writer.py",
        "            current = self._refs.load_branch(repository, branch)[0]\n"
        "            if current.staging_token == token:\n"
        "                return\n",
        "            return\n",
        ("tests/interleavings/test_http.py",),
    ),
    Mutation(
        "commit-records-consumed-tokens-through-http",
        "issue 9 defect 5: a commit racing a hard reset fails clearly, found through HTTP",
        "kvlake/graveler/history/commits.py",
        "            self._refs.record_consumed(repository, mine, commit_id)\n",
        "",
        ("tests/interleavings/test_http.py",),
    ),
    Mutation(
        "worker-waits-on-sealed-tokens",
        "issue 9 defect 1: a record whose token a commit sealed waits",
        "kvlake/deletion/staged_refs.py",
        "            if record.staging_token in instance.sealed:\n",
        "            if False:\n",
        ("tests/deletion/test_worker.py",),
    ),
    Mutation(
        "reset-shadows-sealed-keys",
        "issue 9 defect 1: a reset stages the committed value over keys a commit sealed",
        "kvlake/graveler/history/reset.py",
        "            if branch.sealed_tokens:\n"
        "                shadows = self._shadows(repository, branch, start, stop, read)\n"
        "                self._stage_shadows(repository, branch.staging_token, shadows)\n",
        "",
        ("tests/catalog/test_resets.py", "tests/graveler/test_reset.py"),
    ),
    Mutation(
        "writer-waits-for-commits",
        "invariant 3: commits never block writers (a writer that waits for them fails)",
        "kvlake/graveler/staging/writer.py",
        "            if current.staging_token == token:\n                return\n",
        "            if current.staging_token == token and not current.sealed_tokens:\n"
        "                return\n",
        (
            "tests/graveler/test_writer.py"
            "::test_a_write_finishes_while_a_commit_is_paused_at_any_call",
        ),
    ),
    Mutation(
        "writer-superseded-shortcut",
        "invariant 2 (issue 9 defect 6): a write replaced in a sealed token is written again",
        "kvlake/graveler/staging/writer.py",
        "            token, again = current.staging_token, True\n",
        "            if self._read(keys.staging_partition(token), key)[0] not in (b'', encoded):\n"
        "                return\n"
        "            token, again = current.staging_token, True\n",
        ("tests/catalog/test_write_races.py",),
    ),
    Mutation(
        "writer-logs-replaced-blob",
        "invariant 4: the intent to delete is durable before the staged reference goes",
        "kvlake/graveler/staging/writer.py",
        "            if raw and self.hooks is not None:\n"
        "                self.hooks.before_unstage("
        "repository, token, [(key, decode_value(raw))], value)\n",
        "",
        ("tests/catalog/test_deletion_hooks.py", "tests/catalog/test_catalog.py"),
    ),
    Mutation(
        "writer-marks-restaged-shared",
        "invariant 4a: a value re-written after a seal (maybe committed) is marked shared",
        "kvlake/graveler/staging/writer.py",
        "                # Also in the sealed token, which its commit may publish: shared now.\n"
        "                self.hooks.before_restage(repository, [value])\n",
        "                pass\n",
        ("tests/catalog/test_write_races.py",),
    ),
    Mutation(
        "if-absent-check",
        "issue 10 item 3: If-None-Match is a compare-and-swap, exactly one winner",
        "kvlake/graveler/staging/writer.py",
        "                self._refuse_present("
        "repository, branch, key, raw, expected, below, encoded)\n",
        "                pass\n",
        ("tests/catalog/test_if_absent.py",),
    ),
    Mutation(
        "commit-records-consumed-tokens",
        "invariant 4a: a commit records the tokens it consumes before publishing",
        "kvlake/graveler/history/commits.py",
        "            self._refs.record_consumed(repository, mine, commit_id)\n",
        "",
        ("tests/graveler/test_consumed_tokens.py", "tests/catalog/test_committed_blobs.py"),
    ),
    Mutation(
        "commit-unseals-when-empty",
        "issue 9 defect 4: a commit with nothing to commit leaves the branch clean",
        "kvlake/graveler/history/commits.py",
        "                self._unseal(repository, branch_name, mine, parent_id)\n",
        "",
        ("tests/graveler/test_commits.py",),
    ),
    Mutation(
        "worker-keeps-committed-blobs",
        "invariant 4a: a blob a commit holds is garbage collection's alone",
        "kvlake/deletion/checks.py",
        "        for index in self._published(instance, records, staging):\n",
        "        for index in []:\n",
        ("tests/catalog/test_committed_blobs.py", "tests/deletion/test_worker.py"),
    ),
    Mutation(
        "worker-keeps-committed-blobs-interleaved",
        "invariant 4a, found by the interleaving harness (hard reset or branch deletion)",
        "kvlake/deletion/checks.py",
        "        for index in self._published(instance, records, staging):\n",
        "        for index in []:\n",
        ("tests/interleavings/test_lake.py",),
    ),
    Mutation(
        "sweep-spares-referenced-tokens",
        "invariant 2: the orphan sweep never drops a staging token a branch references",
        "kvlake/graveler/lifecycle/orphans.py",
        "            return token not in referenced[uid], repository\n",
        "            return True, repository\n",
        ("tests/graveler/test_orphans.py",),
    ),
    Mutation(
        "sweep-waits-a-grace-period",
        "issue 9 defect 7: an orphan is dropped only if it stays one for the grace period",
        "kvlake/graveler/lifecycle/orphans.py",
        "            if at is None or now - at < self._grace:\n",
        "            if at is None:\n",
        ("tests/graveler/test_orphans.py",),
    ),
    Mutation(
        "sweep-logs-stray-blobs",
        "invariant 4: a swept stray entry's blob is logged before its partition goes",
        "kvlake/graveler/lifecycle/orphans.py",
        "                    self._before_token_drop(owner, token, at)\n",
        "                    pass\n",
        ("tests/graveler/test_orphans.py",),
    ),
    Mutation(
        "cleaner-reads-every-batch",
        "issue 9 item 8: the cleaner streams its queue in batches and still empties it",
        "kvlake/graveler/lifecycle/cleaner.py",
        "            self._drop_batch(due, report)\n",
        "            self._drop_batch(due, report)\n            return\n",
        ("tests/graveler/test_cleaner_batches.py",),
    ),
    Mutation(
        "log-pages-resume-from-a-cursor",
        "issue 9 item 8: a log page costs its own commits, not the history before it",
        "kvlake/graveler/history/log.py",
        "    if len(frontier) > MAX_CURSOR_FRONTIER:\n",
        "    if True:\n",
        (
            "tests/graveler/test_log.py"
            "::test_each_page_reads_its_own_commits_not_the_history_before_it",
        ),
    ),
    Mutation(
        "sqlite-durable-by-default",
        "issue 10 item 9: an acknowledged write survives a power loss (synchronous=FULL)",
        "kvlake/kv/sqlite.py",
        '        synchronous: Synchronous = "full",\n',
        '        synchronous: Synchronous = "normal",\n',
        ("tests/kv/test_sqlite.py::test_writes_are_durable_by_default_and_normal_is_a_choice",),
    ),
    Mutation(
        "kv-delete-if-sqlite",
        "issue 33 item 5: delete_if removes a key only while it holds the value read (SQLite)",
        "kvlake/kv/sqlite.py",
        '"DELETE FROM kv WHERE partition = ? AND key = ? AND value = ?"',
        '"DELETE FROM kv WHERE partition = ? AND key = ? AND ? IS NOT NULL"',
        (
            "tests/kv/test_store_contract.py"
            "::test_delete_if_keeps_a_value_replaced_between_read_and_delete[sqlite]",
        ),
    ),
    Mutation(
        "kv-delete-if-postgres",
        "issue 33 item 5: delete_if removes a key only while it holds the value read (PostgreSQL)",
        "kvlake/kv/postgres.py",
        """_DELETE_UNCHANGED: Final = 'DELETE FROM "{table}" WHERE partition = %s AND key = %s"""
        """ AND value = %s'""",
        """_DELETE_UNCHANGED: Final = 'DELETE FROM "{table}" WHERE partition = %s AND key = %s"""
        """ AND %s IS NOT NULL'""",
        (
            "tests/kv/test_store_contract.py"
            "::test_delete_if_keeps_a_value_replaced_between_read_and_delete[postgres]",
        ),
    ),
    Mutation(
        "kv-delete-if-memory",
        "issue 33 item 5: delete_if removes a key only while it holds the value read (memory)",
        "kvlake/kv/memory.py",
        "            if part is None or part.values.get(key) != expected:\n",
        "            if part is None or key not in part.values:\n",
        (
            "tests/kv/test_store_contract.py"
            "::test_delete_if_keeps_a_value_replaced_between_read_and_delete[mem]",
        ),
    ),
    Mutation(
        "private-database-file",
        "issue 10 item 10: the metadata file (and its WAL) is the server user's alone",
        "kvlake/kv/sqlite.py",
        "            os.close(create_private_file(self._path))\n",
        "            pass\n",
        ("tests/kv/test_sqlite.py::test_the_database_and_its_folder_are_private",),
    ),
    Mutation(
        "private-blobs",
        "issue 10 item 10: blobs are the server user's alone",
        "kvlake/blockstore/local.py",
        "                fd = create_private_file(temp, dir_fd=descriptor)\n",
        "                fd = os.open(temp, os.O_WRONLY | os.O_CREAT, 0o666, dir_fd=descriptor)\n",
        ("tests/blockstore/test_local.py::test_the_root_its_folders_and_blobs_are_private",),
    ),
    Mutation(
        "failed-creation-frees-the-name",
        "issue 10 item 7: a creation that fails after its record frees the name at once",
        "kvlake/graveler/repository_methods.py",
        "            self._repositories.release_failed_creation(repository, predicate)\n",
        "",
        ("tests/graveler/test_repositories.py",),
    ),
    Mutation(
        "namespace-permission-on-the-normalised-namespace",
        "invariant 7: the namespace is normalised once, before any permission check",
        "kvlake/api/routes/repositories.py",
        '        Permission("fs:AttachStorageNamespace", namespace),\n',
        '        Permission("fs:AttachStorageNamespace", request.storage_namespace),\n',
        (
            "tests/api/test_auth.py"
            "::test_a_namespace_deny_holds_for_every_spelling_of_the_namespace",
        ),
    ),
    Mutation(
        "worker-writes-retries-before-removing",
        "invariant 4: a deletion record goes only after its retry or dead letter is written",
        "kvlake/deletion/worker.py",
        "        self._log.reschedule(number, reschedule)\n"
        "        self._log.store.set_many(keys.DEAD_LETTERS, dead)\n"
        "        kept_keys = {keys.pending_key(r.not_before, r.id) for r in reschedule}\n"
        "        # A batch record's members share its key: removed once, after all outcomes.\n"
        "        done_keys = dict.fromkeys(item.key for item in due if item.key not in kept_keys)\n"
        "        self._log.remove(number, done_keys)\n",
        "        kept_keys = {keys.pending_key(r.not_before, r.id) for r in reschedule}\n"
        "        # A batch record's members share its key: removed once, after all outcomes.\n"
        "        done_keys = dict.fromkeys(item.key for item in due if item.key not in kept_keys)\n"
        "        self._log.remove(number, done_keys)\n"
        "        self._log.reschedule(number, reschedule)\n"
        "        self._log.store.set_many(keys.DEAD_LETTERS, dead)\n",
        ("tests/deletion/test_crashes.py::test_a_crash_while_writing_retries_keeps_every_record",),
    ),
    Mutation(
        "dropped-consumed-token-logs-nothing",
        "invariant 4a / issue 9 item 8: a consumed token's entries are GC's, not logged",
        "kvlake/deletion/hooks.py",
        "        if claim is not None and claim.commit_ids:\n",
        "        if False:\n",
        ("tests/graveler/test_cleaner_hooks.py",),
    ),
    Mutation(
        "address-layout-hour-folder-ends-after-its-hour",
        "issue 12 / 31: GC reads an hour folder's end as the address layout writes it",
        "kvlake/catalog/layout.py",
        "        return calendar.timegm(time.strptime(match.group(1), HOUR_FORMAT))"
        " + HOUR_SECONDS\n",
        "        return calendar.timegm(time.strptime(match.group(1), HOUR_FORMAT))\n",
        ("tests/catalog/test_layout.py",),
    ),
    Mutation(
        "address-layout-key-pattern-skips-other-folders",
        "issue 12 / 31: GC's inventory reads only keys in hour folders as the layout makes them",
        "kvlake/catalog/layout.py",
        'HOUR_KEY_PATTERN: Final = f"^{DATA_FOLDER}{_HOUR}/"\n',
        'HOUR_KEY_PATTERN: Final = f"{DATA_FOLDER}"\n',
        ("tests/catalog/test_layout.py",),
    ),
    Mutation(
        "delete-many-validates-first",
        "invariant 6: bad input changes nothing (every path checked before any is staged)",
        "kvlake/catalog/catalog.py",
        "        keys_ = [check_path(path) for path in paths]"
        "  # validate all before changing any\n",
        "        keys_ = [path.encode() for path in paths]\n",
        ("tests/catalog/test_catalog.py", "tests/api/test_bad_input.py"),
    ),
    Mutation(
        "policy-wildcards-without-backtracking",
        "issue 10 item 1: policy wildcards match in linear time",
        "kvlake/auth/policies.py",
        "from kvlake.auth.wildcard import MAX_PATTERN_LENGTH, covers_under, match, matches_under\n",
        "from kvlake.auth.wildcard import MAX_PATTERN_LENGTH, covers_under, matches_under\n\n\n"
        "def match(pattern: str, value: str) -> bool:\n"
        '    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)\n'
        '    return re.fullmatch("".join(parts), value, re.DOTALL) is not None\n',
        ("tests/api/test_auth.py::test_a_many_star_policy_and_a_path_of_slashes_answer_at_once",),
    ),
    Mutation(
        "login-throttle-before-evaluating",
        "issue 10 item 8: a throttled address waits, even with the right secret",
        "kvlake/auth/authenticator.py",
        "            if wait > 0:\n",
        "            if False:\n",
        ("tests/auth/test_authenticator.py", "tests/api/test_sessions.py"),
    ),
    Mutation(
        "logout-revokes",
        "issue 10 item 8: a logged-out session token is refused",
        "kvlake/auth/authenticator.py",
        "        if self.store.session_revoked(session):\n",
        "        if False:\n",
        ("tests/auth/test_authenticator.py", "tests/api/test_sessions.py"),
    ),
    Mutation(
        "session-bound-to-credential",
        "issue 10 item 8: a token dies with its credential and its user",
        "kvlake/auth/authenticator.py",
        "            or credential_tag(credential) != session.credential_tag\n",
        "",
        ("tests/auth/test_authenticator.py",),
    ),
    Mutation(
        "authenticate-before-body",
        "issue 10 item 4: a caller is authenticated before any byte of its body is read",
        "kvlake/api/routing.py",
        "            await loop.run_in_executor(requests, _authenticate, call)\n",
        "            pass\n",
        ("tests/api/test_limits.py::test_anonymous_body_is_refused_before_it_is_read",),
    ),
    Mutation(
        "namespace-nesting-after-claim",
        "issue 10 item 2: nesting is checked after the claim is written, so racers see each other",
        "kvlake/graveler/lifecycle/namespaces.py",
        "        for other, claim in self._nested(namespace):\n"
        "            if self._holds(claim, taking_over=False):\n"
        '                self._settle(key, mine, "free")\n'
        "                raise StorageNamespaceInUseError(_in_use(namespace, other, claim))\n",
        "",
        ("tests/graveler/test_namespaces.py",),
    ),
    Mutation(
        "namespace-purging-blocks-takeover",
        "issue 9 (restore and worker): a namespace being purged cannot be taken over",
        "kvlake/graveler/lifecycle/namespaces.py",
        '        if claim.state == "purging":\n            return True\n',
        '        if claim.state == "purging":\n            return False\n',
        ("tests/interleavings/test_lake.py",),
    ),
    Mutation(
        "namespace-kept-blocks-new-repositories",
        "issue 10 item 2: a namespace deleted without purge keeps its data from new repositories",
        "kvlake/graveler/lifecycle/namespaces.py",
        "        return live or not taking_over  # kept: only a bare repository may take it over\n",
        "        return live\n",
        ("tests/graveler/test_namespaces.py",),
    ),
    Mutation(
        "namespace-settled-before-deletion",
        "issue 10 item 2: a deletion settles the namespace claim while the record is live",
        "kvlake/graveler/lifecycle/repositories.py",
        "                before(repository)\n",
        "                pass\n",
        ("tests/graveler/test_namespaces.py",),
    ),
    Mutation(
        "purge-released-when-finished",
        "issue 10 item 2: a finished purge frees its namespace",
        "kvlake/deletion/purge.py",
        "            self.graveler.release_namespace("
        "request.storage_namespace, request.instance_uid)\n",
        "            pass\n",
        ("tests/deletion/test_purge.py",),
    ),
    Mutation(
        "purge-keeps-a-reused-namespace",
        "issue 10 item 2: a purge deletes only what its own instance owns",
        "kvlake/deletion/checks.py",
        "            if instance.taken_by:\n",
        "            if False:\n",
        ("tests/deletion/test_purge.py",),
    ),
    Mutation(
        "s3-root-wall",
        "issue 15: an s3 namespace must be below the configured bucket/prefix root",
        "kvlake/blockstore/s3/store.py",
        "        if len(segments) <= len(self._root) or segments[: len(self._root)]"
        " != self._root:\n",
        "        if False:\n",
        (
            "tests/blockstore/test_s3.py::test_namespaces_must_be_below_the_root",
            "tests/api/test_s3_lake.py",
        ),
    ),
    Mutation(
        "aimd-one-cut-per-round",
        "issue 15: workers throttled together cut the shared rate once, not once each",
        "kvlake/blockstore/throttle.py",
        "            if round_ != self._round:\n                return",
        "            if round_ != self._round:\n                pass",
        ("tests/blockstore/test_throttle.py",),
    ),
    Mutation(
        "s3-throttle-lowers-the-rate",
        "issue 15: a throttled S3 answer lowers the rate every worker shares",
        "kvlake/blockstore/s3/requests.py",
        "                    self._limiter.throttled_in(round_)\n"
        "                    self._limiter.pause(_backoff(throttles))\n",
        "                    self._limiter.pause(_backoff(throttles))\n",
        ("tests/blockstore/test_s3.py::test_throttled_deletes_slow_down_and_lose_nothing",),
    ),
    Mutation(
        "s3-delete-batches-of-1000",
        "issue 15: DeleteObjects gets at most 1,000 keys",
        "kvlake/blockstore/s3/store.py",
        "            if len(batch) == DELETE_BATCH:\n",
        "            if len(batch) == 10 * DELETE_BATCH:\n",
        ("tests/blockstore/test_s3.py::test_delete_many_sends_batches_of_a_thousand",),
    ),
    Mutation(
        "s3-failed-batch-keys-retried-singly",
        "issue 15: keys a DeleteObjects answer failed are retried one by one",
        "kvlake/blockstore/s3/store.py",
        "            try:\n                self._delete(namespace, key)\n",
        "            try:\n                raise InvalidInputError(key)\n",
        ("tests/blockstore/test_s3.py::test_keys_a_batch_failed_are_retried_singly",),
    ),
    Mutation(
        "gc-keeps-addresses-copied-during-the-run",
        "issue 12: a GC candidate a copy shared after the run started is kept",
        "kvlake/deletion/checks.py",
        "            self._check_copies(instance, records, gc_indexes, verdicts)\n",
        "",
        ("tests/deletion/test_gc.py",),
    ),
    Mutation(
        "gc-rules-refuse-negative-days",
        "issue 12: a negative retention is refused and changes nothing",
        "kvlake/graveler/lifecycle/gcrules.py",
        "    if days < 0:\n",
        "    if False:\n",
        ("tests/graveler/test_gcrules.py",),
    ),
    Mutation(
        "retention-keeps-heads",
        "issue 12 / invariant 4a: a branch head is retained whatever its age",
        "kvlake/graveler/lifecycle/retention.py",
        "        if head or self.date(start) > threshold:",
        "        if self.date(start) > threshold:",
        ("tests/graveler/test_retention.py::test_heads_are_kept_whatever_their_age",),
    ),
    Mutation(
        "retention-walk-stops-at-the-first-old-commit",
        "issue 12: a branch's line is retained until the first commit older than its threshold",
        "kvlake/graveler/lifecycle/retention.py",
        "        while self.date(current) > threshold:\n",
        "        while True:\n",
        ("tests/graveler/test_retention.py::test_retained_commits_follow_the_rules",),
    ),
    Mutation(
        "retention-keeps-the-first-old-commit",
        "issue 12 / invariant 4a: the first commit older than the threshold is retained too",
        "kvlake/graveler/lifecycle/retention.py",
        "            if self._keep(parent):\n",
        "            if self.date(parent) > threshold and self._keep(parent):\n",
        ("tests/graveler/test_retention.py::test_retained_commits_follow_the_rules",),
    ),
    Mutation(
        "retention-walks-first-parents",
        "issue 12: a line is walked by first parents (a merged-in line has its own rule)",
        "kvlake/graveler/lifecycle/retention.py",
        "            parent = self._slot(commit.parents[0])\n",
        "            parent = self._slot(commit.parents[-1])\n",
        ("tests/graveler/test_retention.py::test_retained_commits_follow_the_rules",),
    ),
    Mutation(
        "retention-dangling-commits-start-walks",
        "issue 12: a commit no branch holds (deleted branch, hard reset) is a starting point",
        "kvlake/graveler/lifecycle/retention.py",
        "        starts.extend((default, i, False) for i in graph.leaves() if i not in heads)\n",
        "",
        ("tests/graveler/test_retention.py::test_retained_commits_follow_the_rules",),
    ),
    Mutation(
        "retention-scans-commits-before-branches",
        "issue 12 / invariant 4a: a head published during the walk is not taken for dangling",
        "kvlake/graveler/lifecycle/retention.py",
        "        graph.scan()  # before the branches: see the module docstring\n"
        "        default = now - rules.default_retention_days * DAY\n"
        "        starts: list[tuple[float, int, bool]] = []\n"
        "        for name, branch in self._refs.list_branches(repository):\n",
        "        branches = list(self._refs.list_branches(repository))\n"
        "        graph.scan()\n"
        "        default = now - rules.default_retention_days * DAY\n"
        "        starts: list[tuple[float, int, bool]] = []\n"
        "        for name, branch in branches:\n",
        (
            "tests/graveler/test_retention.py"
            "::test_a_commit_published_before_the_walk_reads_the_branches_is_retained",
        ),
    ),
    Mutation(
        "spark-task-same-store",
        "a Spark task refuses a KV store other than its driver's (relative paths, other hosts)",
        "kvlake/pipelines/executors.py",
        "                    _check_same_store(lake, task)\n",
        "                    pass\n",
        ("tests/pipelines/test_executors.py",),
    ),
    Mutation(
        "store-identity-first-writer-wins",
        "two processes asking a new store for its identity both get the one written first",
        "kvlake/kv/identity.py",
        "        return read_store_identity(store)\n",
        "        pass\n",
        ("tests/pipelines/test_executors.py::test_the_first_identity_written_holds",),
    ),
    Mutation(
        "gc-marks-live-staging",
        "issue 12 / invariant 4a: blobs staged entries reference are marked",
        "kvlake/pipelines/gc/collector.py",
        '            marked = self._table(files, "staged").unionByName(committed)\n',
        "            marked = committed\n",
        ("tests/pipelines/test_gc.py::test_gc_deletes_exactly_the_expired_unreferenced_old_blobs",),
    ),
    Mutation(
        "gc-lists-only-hours-past-the-grace-period",
        "issue 12: blobs younger than the grace period are never candidates",
        "kvlake/pipelines/gc/collector.py",
        "            if (end := hour_folder_end(folder)) is not None and (end > cutoff) == young\n",
        "            if (end := hour_folder_end(folder)) is not None\n",
        (
            "tests/pipelines/test_gc.py::"
            "test_without_the_long_rule_the_overwritten_and_deleted_blobs_go_too",
        ),
    ),
    Mutation(
        "gc-sweep-reads-commits-published-after-the-mark",
        "issue 12: a commit published between mark and sweep keeps what it references",
        "kvlake/pipelines/gc/collector.py",
        "            if late is not None:\n",
        "            if False:\n",
        (
            "tests/pipelines/test_gc.py::"
            "test_a_commit_published_between_mark_and_sweep_keeps_what_it_references",
        ),
    ),
    Mutation(
        "gc-sweep-checks-candidates-afresh",
        "issue 12 / invariant 4: a candidate is deleted only after a fresh in-use check",
        "kvlake/pipelines/gc/tasks.py",
        '        if verdict.action == "delete":\n',
        "        if True:\n",
        ("tests/pipelines/test_gc.py::test_writers_racing_a_run_never_lose_a_referenced_blob",),
    ),
    Mutation(
        "gc-inventory-takes-hours-ended-by-the-cutoff",
        "issue 12: an inventory's blob is a candidate once its hour ended by the cutoff",
        "kvlake/pipelines/gc/tasks.py",
        "else pc.less_equal(ended, cutoff)\n",
        "else pc.less(ended, cutoff)\n",
        (
            "tests/pipelines/test_tasks.py::"
            "test_inventory_keeps_hour_folders_that_ended_by_the_cutoff_and_only_them",
        ),
    ),
    Mutation(
        "operation-counters-compare-and-swap",
        "invariant 5 (issue 13): a batch's counters move with `done` by compare-and-swap"
        " (Ledger.update through kv.update)",
        "kvlake/kv/updates.py",
        "            store.set_if(partition, key, wanted, predicate)\n",
        "            store.set(partition, key, wanted)\n",
        (
            "tests/interleavings/test_operations.py"
            "::test_no_interleaving_double_counts_or_loses_a_batch[local-two_processors_fold]",
        ),
    ),
    Mutation(
        "enumeration-resumes-from-its-cursor",
        "invariant 5 (issue 13): a restarted enumeration lists on from its checkpoint",
        "kvlake/operations/bulk_delete_driver.py",
        '        start = cursor.encode() + b"\\0" if cursor is not None else prefix\n',
        "        start = prefix\n",
        (
            "tests/operations/test_crash_resume.py"
            "::test_a_killed_bulk_delete_resumes_and_completes_exactly[enumerating-local]",
        ),
    ),
    Mutation(
        "bulk-delete-takes-its-delete-lock",
        "issue 13: a bulk delete locks its prefix before it reads write locks (blind tombstones)",
        "kvlake/operations/bulk_delete_driver.py",
        "            if not operation.options.dry_run:\n                self._lock(held)\n"
        "            if not operation.enumerated:\n",
        "            if not operation.enumerated:\n",
        (
            "tests/interleavings/test_operations.py"
            "::test_a_new_blob_landing_between_the_tombstone_read_and_write_is_never_orphaned",
            # Checkpoints renew the lock too, so without this line it is first written
            # at the first batch: an upload during the listing before it is accepted.
            "tests/operations/test_delete_locks.py"
            "::test_the_delete_lock_lives_through_an_enumeration_that_keeps_nothing_for_long",
        ),
    ),
    Mutation(
        "upload-refused-under-a-bulk-delete",
        "issue 13: an upload under a running bulk delete is refused, naming the operation",
        "kvlake/operations/locks.py",
        "            self._refuse_deleting(repository, path, now, branch=branch)\n"
        "        except BaseException:\n",
        "            pass\n        except BaseException:\n",
        (
            "tests/operations/test_bulk_delete.py"
            "::test_an_upload_under_a_running_bulk_delete_is_refused_naming_it",
            "tests/interleavings/test_operations.py"
            "::test_no_interleaving_double_counts_or_loses_a_batch[local-upload_races_bulk_delete]",
        ),
    ),
    Mutation(
        "bulk-delete-skips-write-locked-paths",
        "issue 13: a write-locked object survives a bulk delete, listed as skipped",
        "kvlake/operations/batches.py",
        "            if lock is not None:\n                skipped.append(",
        "            if lock is not None and False:\n                skipped.append(",
        (
            "tests/operations/test_bulk_delete.py"
            "::test_a_write_locked_object_is_skipped_and_listed_with_its_reason",
            "tests/api/test_operations.py",
        ),
    ),
    Mutation(
        "object-locks-expire",
        "issue 13: an expired lock protects nothing (a crashed holder never blocks for ever)",
        "kvlake/operations/locks.py",
        "                lock = decode_lock(raw)\n                if lock.live(now):\n"
        "                    found.setdefault(",
        "                lock = decode_lock(raw)\n                if True:\n"
        "                    found.setdefault(",
        ("tests/operations/test_bulk_delete.py::test_an_expired_lock_does_not_protect",),
    ),
    Mutation(
        "operations-visible-to-creator-and-admins",
        "issue 13: another user cannot see or cancel an operation (404)",
        "kvlake/operations/bulk_delete.py",
        "        if not admin and not operation.owned_by(user):\n"
        "            raise keys.not_found(operation_id)\n",
        "        if False:\n            raise keys.not_found(operation_id)\n",
        (
            "tests/operations/test_bulk_delete.py::test_only_the_creator_and_admins_see_and_cancel",
            "tests/api/test_operations.py::test_another_user_cannot_see_or_cancel",
        ),
    ),
    Mutation(
        "cancel-stops-at-a-batch-boundary",
        "issue 13: a cancelled bulk delete stops at the next batch boundary",
        "kvlake/operations/bulk_delete_driver.py",
        "        while held.operation.done < held.operation.batches:\n"
        "            if stop.is_set() or held.operation.cancel_requested:\n",
        "        while held.operation.done < held.operation.batches:\n"
        "            if stop.is_set():\n",
        ("tests/operations/test_bulk_delete.py::test_cancel_stops_at_a_batch_boundary",),
    ),
    Mutation(
        "bulk-delete-filters-checked-first",
        "invariant 6 (issue 13): contradictory filters are refused with nothing recorded",
        "kvlake/operations/bulk_delete.py",
        "        check_filters(options.filters)\n        repository = self.graveler",
        "        repository = self.graveler",
        (
            "tests/operations/test_bulk_delete.py::test_bad_input_is_refused_and_records_nothing",
            "tests/api/test_operations.py::test_bad_requests_are_refused_and_record_nothing",
        ),
    ),
    Mutation(
        "bulk-delete-refuses-a-tag-as-a-branch",
        "invariant 6 (issue 13): a tag or commit id instead of a branch is refused as such",
        "kvlake/operations/bulk_delete.py",
        "        self._check_branch(repository.name, path.branch)\n",
        "",
        ("tests/operations/test_bulk_delete.py::test_a_tag_is_refused_as_a_tag",),
    ),
    Mutation(
        "upload-outliving-its-lock-rechecks",
        "issue 13: an upload whose lock expired mid-stream re-checks for a bulk delete",
        "kvlake/catalog/guard.py",
        "        if self.held is not None:\n"
        "            guard._check_outlived(self.repository, self.branch, self.path, self.held)\n",
        "",
        (
            "tests/operations/test_bulk_delete.py"
            "::test_an_upload_that_outlived_its_lock_under_a_new_bulk_delete_is_refused",
        ),
    ),
    # -- issue 28: upload locks in a per-process lease, renewed in bulk -----------------
    Mutation(
        "upload-lease-bulk-delete-settles",
        "issue 28: a bulk delete waits for other processes' leases to list uploads it missed",
        "kvlake/operations/locks.py",
        "            encode(_delete_lock(operation_id, branch, prefix, expires)),\n"
        "        )\n        self.settle_uploads()\n",
        "            encode(_delete_lock(operation_id, branch, prefix, expires)),\n        )\n",
        (
            "tests/operations/test_upload_leases.py::test_a_bulk_delete_skips_an_upload_in_flight_in_another_process",
        ),
    ),
    Mutation(
        "upload-lease-uploads-are-write-locks",
        "issue 28: a bulk delete skips the paths of uploads in flight, from every lease",
        "kvlake/operations/locks.py",
        "            if first <= path <= last:\n",
        "            if False:\n",
        (
            "tests/operations/test_upload_leases.py::test_a_bulk_delete_skips_an_upload_in_flight_in_another_process",
            "tests/interleavings/test_operations.py"
            "::test_a_new_blob_landing_between_the_tombstone_read_and_write_is_never_orphaned",
        ),
    ),
    Mutation(
        "upload-lease-published-before-registering",
        "issue 28: an upload registers only while its process's lease record is live",
        "kvlake/operations/leases.py",
        "        if self.clock() + self.ttl / 2 >= self._expires:\n            self.renew()\n",
        "",
        (
            "tests/operations/test_upload_leases.py::test_a_bulk_delete_skips_an_upload_in_flight_in_another_process",
        ),
    ),
    Mutation(
        "upload-lease-expires",
        "issue 28: a crashed process's lease expires (bulk deletes stop waiting for it)",
        "kvlake/operations/leases.py",
        "        if lease.live(now):\n            yield lease\n",
        "        if True:\n            yield lease\n",
        (
            "tests/operations/test_upload_leases.py::test_a_crashed_process_lease_expires_and_stops_protecting",
        ),
    ),
    Mutation(
        "upload-lease-gap-is-not-held",
        "issue 28: an upload whose lease was renewed after a gap re-checks the delete locks",
        "kvlake/operations/leases.py",
        "        gap = now >= self._expires\n",
        "        gap = self._written is None\n",
        (
            "tests/operations/test_upload_leases.py::test_an_upload_whose_lease_lapsed_mid_body_rechecks_the_delete_locks",
        ),
    ),
    Mutation(
        "update-marks-committed-shared",
        "invariant 4a: an update restaging a committed blob marks it shared",
        "kvlake/graveler/staging/writer.py",
        "                    self.hooks.before_restage(repository, [value])\n"
        "                else:\n",
        "                    pass\n                else:\n",
        (
            "tests/catalog/test_update_metadata.py::"
            "test_a_committed_object_gets_a_staged_entry_and_its_blob_outlives_an_overwrite",
        ),
    ),
    Mutation(
        "update-compare-and-swap",
        "invariant 2: an update never replaces a racing write with a change of what it read",
        "kvlake/graveler/staging/writer.py",
        "                self._store.set_if(partition, key, encoded, expected)\n"
        "                return\n"
        "            except PreconditionFailedError:\n"
        "                continue  # a racing writer won: change what is there now\n",
        "                self._store.set(partition, key, encoded)\n"
        "                return\n"
        "            except PreconditionFailedError:\n"
        "                continue\n",
        (
            "tests/graveler/test_writer.py::"
            "test_an_update_changes_whatever_a_racing_write_left_at_any_call",
        ),
    ),
    Mutation(
        "link-marks-shared",
        "invariant 4: a linked blob is never deleted while an entry holds it",
        "kvlake/catalog/links.py",
        "            self._deletion.mark_shared(repository.instance_uid, address)\n",
        "            pass\n",
        (
            "tests/catalog/test_links.py::test_relinking_a_blob_logged_for_deletion_keeps_it",
            "tests/catalog/test_links.py::"
            "test_linking_a_committed_blob_elsewhere_then_deleting_it_keeps_the_commit_readable",
        ),
    ),
    Mutation(
        "link-checks-the-blob-after-the-mark",
        "invariant 4: no entry is staged over a blob a worker deleted",
        "kvlake/catalog/links.py",
        "        self._check_blob(namespace, address, physical_address, size)  # after the mark"
        " too\n",
        "",
        (
            "tests/catalog/test_links.py::"
            "test_a_blob_a_worker_deleted_between_the_check_and_the_mark_is_not_linked",
        ),
    ),
    Mutation(
        "link-only-inside-the-namespace",
        "invariant 7: kvlake never links (so never deletes) a blob outside its namespace",
        "kvlake/catalog/links.py",
        '        inside = address.key_in(parse_address(namespace, what="storage namespace"))\n',
        "        inside = address.path\n",
        (
            "tests/catalog/test_links.py::"
            "test_an_address_outside_the_namespace_is_refused_and_never_marked",
        ),
    ),
    Mutation(
        "commit-record-is-its-content-address",
        "issue 14: a commit record is stored only under the id its content hashes to",
        "kvlake/graveler/refs/store.py",
        "        if commit_id(commit) != identifier:\n",
        "        if False:\n",
        (
            "tests/catalog/test_commit_records.py::"
            "test_a_commit_record_is_stored_under_its_content_address_only",
        ),
    ),
    Mutation(
        "commit-names-an-existing-metarange",
        "issue 14: a commit (source_metarange, a record) names a metarange that is there",
        "kvlake/graveler/history/commits.py",
        "            self._committed.ranges(repository.storage_namespace, metarange_id)\n",
        "            pass\n",
        (
            "tests/catalog/test_commit_records.py::"
            "test_a_source_metarange_needs_a_clean_branch_and_an_existing_metarange",
        ),
    ),
    Mutation(
        "metadata-location-exists",
        "issue 14: getRange and getMetaRange name only files that are there",
        "kvlake/graveler/committed/manager.py",
        "        if not self._blockstore.exists(namespace, key):\n",
        "        if False:\n",
        ("tests/api/test_metadata_locations.py::test_metarange_and_range_locations",),
    ),
    Mutation(
        "restore-task-refuses-a-non-bare-repository",
        "issue 14: restoreSubmit refuses at once what lakeFS refuses (a repository not bare)",
        "kvlake/operations/refs_tasks.py",
        "    if not dumps.is_bare(repository):\n",
        "    if False:\n",
        ("tests/api/test_dump_tasks.py::test_a_dump_task_restores_through_a_restore_task",),
    ),
    Mutation(
        "pull-request-update-compare-and-swap",
        "issue 14: racing edits of one pull request never lose each other (through kv.update)",
        "kvlake/kv/updates.py",
        "            store.set_if(partition, key, wanted, predicate)\n",
        "            store.set(partition, key, wanted)\n",
        ("tests/graveler/test_pulls.py::test_racing_updates_of_one_pull_request_both_land",),
    ),
    Mutation(
        "pull-request-merges-only-when-open",
        "issue 14: a closed or merged pull request is not merged again",
        "kvlake/graveler/pulls.py",
        '        if pull.status != "open":\n',
        "        if False:\n",
        ("tests/graveler/test_pulls.py::test_a_pull_request_is_opened_listed_and_merged",),
    ),
    Mutation(
        "link-refuses-before-marking",
        "invariant 6: a link a protected branch refuses leaves no shared mark",
        "kvlake/catalog/links.py",
        '        self._graveler.protection.check(repository, branch, "staging_write")\n',
        "",
        (
            "tests/catalog/test_links.py::"
            "test_a_protected_branch_refuses_a_link_and_nothing_is_marked",
        ),
    ),
    Mutation(
        "worker-claims-before-reading-marks",
        "invariant 4: a worker claims what it may delete before its last read of the marks",
        "kvlake/deletion/checks.py",
        "            self._log.claim(uid, (records[i].address for i in staging))\n",
        "            pass\n",
        (
            "tests/catalog/test_links.py::"
            "test_a_link_racing_a_worker_between_its_check_and_its_delete_is_refused",
        ),
    ),
    Mutation(
        "link-reads-the-claims",
        "invariant 4: a link refuses a blob a worker claimed after it marked the address",
        "kvlake/catalog/links.py",
        "            if self._deletion.claimed(repository.instance_uid, address):\n",
        "            if False:\n",
        (
            "tests/catalog/test_links.py::"
            "test_a_link_racing_a_worker_between_its_check_and_its_delete_is_refused",
        ),
    ),
    Mutation(
        "worker-releases-claims",
        "issue 14: a worker drops its claims once its deletes are done",
        "kvlake/deletion/worker.py",
        "        self._log.release_claims(\n",
        "        (\n",
        ("tests/catalog/test_links.py::test_a_worker_leaves_no_claims_behind",),
    ),
    Mutation(
        "group-acl-stands-alone",
        "issue 14: a group's ACL is its only policy, as lakeFS writes it",
        "kvlake/auth/acl.py",
        "        if other != acl_id:\n",
        "        if False:\n",
        ("tests/auth/test_acl.py::test_setting_an_acl_detaches_the_groups_other_policies",),
    ),
    Mutation(
        "link-intent-at-hand-out",
        "invariant 4 (issue 15): an address handed out for a direct upload is logged first",
        "kvlake/catalog/direct.py",
        "            self._deletion.append([record])\n        return address, now + LINK_SECONDS\n",
        "        return address, now + LINK_SECONDS\n",
        ("tests/catalog/test_direct_uploads.py",),
    ),
    Mutation(
        "link-withdraws-intent",
        "invariant 4a (issue 15): a linked address's hand-out record is withdrawn before staging",
        "kvlake/catalog/direct.py",
        "        if self._deletion.withdraw("
        "self._record(self._deletion, repository, address, issued)):\n",
        "        if True:\n",
        ("tests/catalog/test_direct_uploads.py",),
    ),
    Mutation(
        "link-ticket-signature",
        "issue 15: only an address handed out for this path and branch links",
        "kvlake/catalog/tickets.py",
        "            or not hmac.compare_digest(\n"
        "                signature,"
        " self._signature(repository, branch, path, base, int(issued_text))\n"
        "            )\n",
        "",
        ("tests/catalog/test_direct_uploads.py", "tests/api/test_s3_lake.py"),
    ),
    Mutation(
        "link-ticket-expiry",
        "issue 15: a handed-out address links for a day, then its record may delete it",
        "kvlake/catalog/tickets.py",
        "        if self._clock() > issued + LINK_SECONDS:\n",
        "        if False:\n",
        ("tests/catalog/test_direct_uploads.py",),
    ),
    Mutation(
        "relink-marks-shared",
        "invariant 4a (issue 15): a second link of an address leaves its blob to GC",
        "kvlake/catalog/direct.py",
        "        self._deletion.mark_shared(repository.instance_uid, address)\n"
        "        return False\n",
        "        return False\n",
        ("tests/catalog/test_direct_uploads.py",),
    ),
    Mutation(
        "deep-copy-own-blob",
        "invariant 4 (issue 15): a deep copy is a blob of its own, which the log may delete",
        "kvlake/catalog/catalog.py",
        "        address = new_address(now)\n"
        "        try:\n"
        "            # A linked source's recorded ETag: bytes replaced since its link are"
        " refused.\n"
        "            size = self.blockstore.copy(\n"
        "                repository.storage_namespace, source.address, address,"
        " if_match=source.blob_etag\n"
        "            )\n",
        "        address = source.address\n"
        "        try:\n"
        "            size = self.blockstore.size(repository.storage_namespace, address)\n",
        ("tests/catalog/test_copies.py",),
    ),
    Mutation(
        "import-entries-name-no-blob",
        "invariant 4 (issue 15): imported objects are not kvlake's: no record ever names them",
        "kvlake/catalog/references.py",
        "    if is_external(stat.address):\n"
        '        return EntryRef("", stat.mtime, stat.address)  # imported: never kvlake\'s to'
        " delete\n",
        "",
        ("tests/catalog/test_imports.py",),
    ),
    Mutation(
        "dropped-token-skips-addressless",
        "invariant 4 (issue 15): a dropped token logs no record for entries without a blob",
        "kvlake/deletion/hooks.py",
        "                if not ref.address:\n"
        "                    continue  # no blob of the namespace: an imported object, or not an"
        " object\n",
        "",
        ("tests/catalog/test_imports.py",),
    ),
    Mutation(
        "import-cancel-stops",
        "issue 15: a canceled import commits nothing",
        "kvlake/catalog/import_runs.py",
        "                if record.cancel_requested:\n                    raise Cancelled\n",
        "",
        ("tests/catalog/test_imports.py",),
    ),
    Mutation(
        "import-outside-own-namespace",
        "invariant 4a (issue 15): an import never references the repository's own blobs",
        "kvlake/catalog/import_sources.py",
        "        if prefix_overlaps(address, rest, own):\n",
        "        if False:\n",
        ("tests/catalog/test_imports.py", "tests/api/test_s3_lake.py"),
    ),
    Mutation(
        "import-clean-branch",
        "issue 15: an import commits only on a clean branch (its one commit is the import)",
        "kvlake/catalog/imports.py",
        "        self._graveler.check_clean(repository, branch)\n",
        "",
        ("tests/catalog/test_imports.py",),
    ),
    Mutation(
        "import-rereads-repository",
        "invariant 1 (issue 15): an import commits only into the instance it started in",
        "kvlake/catalog/import_runs.py",
        "        self._repository(operation)  # invariant 1: it may have been deleted meanwhile\n",
        "",
        ("tests/catalog/test_imports.py",),
    ),
    Mutation(
        "multipart-complete-verifies-first",
        "issue 15: no blob is assembled at an address that cannot be linked at the path",
        "kvlake/catalog/direct.py",
        "        self._verify(repository, branch, path, address)\n"
        "        namespace = repository.storage_namespace\n"
        "        etag = self._blockstore.complete_upload(",
        "        namespace = repository.storage_namespace\n"
        "        etag = self._blockstore.complete_upload(",
        ("tests/catalog/test_direct_uploads.py",),
    ),
    Mutation(
        "gc-candidates-claimed-before-their-marks-are-read",
        "invariant 4 (issue 12): a link racing a GC check either is seen or sees the claim",
        "kvlake/deletion/checks.py",
        "                self._log.claim(instance.repository.instance_uid, candidates)\n",
        "                pass\n",
        (
            "tests/deletion/test_gc.py::"
            "test_a_link_racing_a_gc_check_is_refused_once_the_candidate_is_claimed",
        ),
    ),
    Mutation(
        "gc-sweep-run-again-asks-sizes",
        "issue 12: a sweep run again counts what an earlier attempt deleted as gone, not deleted",
        "kvlake/pipelines/gc/tasks.py",
        "                chunk[address] = None if again else size\n",
        "                chunk[address] = size\n",
        (
            "tests/pipelines/test_gc.py::"
            "test_a_sweep_run_again_after_a_partial_one_finishes_and_loses_nothing",
        ),
    ),
    Mutation(
        "range-tombstones-list-the-token-first",
        "range tombstones: a token is listed in Branch.tombstone_tokens before its first record",
        "kvlake/graveler/staging/writer.py",
        "            if self._list_tombstone_token(repository, branch, token):\n",
        "            if True:\n",
        (
            "tests/graveler/test_range_tombstones.py::test_ever"
            "y_reader_sees_the_tombstones_of_a_range_tombstone",
        ),
    ),
    Mutation(
        "range-tombstone-overlap-looks-as-far-as-the-span",
        "issue 26: records sharing one key overlap (the forward look stops only past the span)",
        "kvlake/graveler/staging/store.py",
        "            if other.min_key > record.max_key:\n",
        "            if other.min_key >= record.max_key:\n",
        (
            "tests/graveler/test_range_tombstones.py"
            "::test_overlapping_records_are_found_pair_by_pair_in_one_forward_pass",
        ),
    ),
    Mutation(
        "range-tombstone-overlap-marks-both-records",
        "issue 26: an overlapping pair, seen from its first record, marks the later one too",
        "kvlake/graveler/staging/store.py",
        "            if other.range_id != record.range_id or record.keep:\n",
        "            if False:\n",
        (
            "tests/graveler/test_range_tombstones.py"
            "::test_overlapping_records_are_found_pair_by_pair_in_one_forward_pass",
        ),
    ),
    Mutation(
        "range-tombstone-loses-to-its-tokens-entries",
        "range tombstones: an entry staged in the record's token wins over the record",
        "kvlake/graveler/staging/store.py",
        "        return overlay([entries, tombstones])  # the token's own entries win\n",
        "        return overlay([tombstones, entries])\n",
        (
            "tests/graveler/test_range_tombstones.py"
            "::test_entries_staged_in_the_token_win_and_new_keys_are_never_hidden",
        ),
    ),
    Mutation(
        "range-tombstone-hides-only-its-keys",
        "range tombstones: a key created inside a range's span is no key of the range",
        "kvlake/graveler/staging/range_tombstones.py",
        "        return record.min_key <= key and self._holds(record, key)\n",
        "        return record.min_key <= key\n",
        (
            "tests/graveler/test_range_tombstones.py"
            "::test_a_key_committed_into_a_ranges_span_later_is_not_hidden",
        ),
    ),
    Mutation(
        "commit-applies-range-tombstones",
        "range tombstones: a commit drops the keys its tokens' records hide",
        "kvlake/graveler/history/commits.py",
        "            staged = self._staging.read(namespace, mine, branch.tombstone_tokens)\n",
        "            staged = self._staging.read(namespace, mine, ())\n",
        (
            "tests/graveler/test_range_tombstones.py::test_a_c"
            "ommit_drops_range_tombstones_and_keeps_the_rest",
        ),
    ),
    Mutation(
        "deletion-reads-no-record-as-an-entry",
        "range tombstones: the deletion layer's scans of a token start past the records",
        "kvlake/graveler/references.py",
        "        with self._store.scan(partition, max(start, FIRST_PATH), batch_size=batch_size) as"
        " scan:\n",
        '        with self._store.scan(partition, b"", batch_size=batch_size) as scan:\n',
        (
            "tests/graveler/test_range_tombstones.py::test_t"
            "he_deletion_layer_reads_no_record_as_an_entry",
        ),
    ),
    Mutation(
        "untagged-range-batch-stays-a-range-batch",
        "issue 26: a range batch stored before batches were tagged resumes as a range batch",
        "kvlake/operations/records.py",
        "    if old.ranges:\n",
        "    if False:\n",
        (
            "tests/operations/test_batch_records.py::test_a_batch_st"
            "ored_before_batches_were_tagged_decodes_to_its_variant",
        ),
    ),
    Mutation(
        "listing-skips-wholly-tombstoned-ranges",
        "issue 26: listing a branch skips the ranges its range tombstones hide whole, unread",
        "kvlake/graveler/entry_methods.py",
        "        hidden = staged.wholly_tombstoned(metarange_id, start, stop)\n",
        "        hidden = frozenset[str]()\n",
        (
            "tests/graveler/test_range_tombstone_listing.py::test_l"
            "isting_a_branch_skips_wholly_tombstoned_ranges_unread",
        ),
    ),
    Mutation(
        "range-batch-plan-stored-before-it-runs",
        "issue 13: a range batch's plan is stored first, so a retry counts what it counted",
        "kvlake/operations/batches.py",
        "            ledger.write_batch(operation.id, number, batch)\n",
        "",
        ("tests/operations/test_range_batches.py::test_a_range_batch_processed_again_counts_once",),
    ),
    Mutation(
        "range-tombstone-keys-keep-to-the-span",
        "range tombstones: a record's keys are those of its range inside its span",
        "kvlake/graveler/staging/range_tombstones.py",
        "        high = bisect_right(range_keys, record.max_key)\n",
        "        high = len(range_keys)\n",
        (
            "tests/graveler/test_range_tombstones.py"
            "::test_a_record_hides_its_ranges_keys_inside_its_span_only",
        ),
    ),
    Mutation(
        "range-batch-deletes-what-was-committed-since-base",
        "issue 13: a range batch deletes objects committed into its span since the base commit",
        "kvlake/operations/batches.py",
        "        entries = committed_since(context, repository, operation.base_commit,"
        " batch.ranges, branch)\n",
        "        entries: dict[bytes, Value | None] = {}\n",
        (
            "tests/operations/test_range_batches.py"
            "::test_an_object_committed_into_a_range_span_during_the_delete_is_deleted",
        ),
    ),
    Mutation(
        "range-batch-counted-without-staged-deletions",
        "invariant 5: a range batch's count leaves out deletions staged before (counted once)",
        "kvlake/operations/bulk_delete_driver.py",
        "        estimate = max(0, sum(info.count for info in whole) - len(gone))\n",
        "        estimate = sum(info.count for info in whole)\n",
        (
            "tests/operations/test_range_batches.py"
            "::test_deletions_staged_in_a_whole_range_are_not_counted_then_uncounted",
        ),
    ),
    Mutation(
        "range-batch-counts-objects-deleted-since-enumeration",
        "invariant 5: objects deleted after enumeration counted them count as deleted",
        "kvlake/operations/batches.py",
        "        deleted += max(0, batch.estimate - deleted - failed - plan.skipped)\n",
        "",
        (
            "tests/operations/test_range_batches.py"
            "::test_an_object_deleted_after_enumeration_counts_as_deleted",
        ),
    ),
    Mutation(
        "task-stale-running-reads-failed",
        "invariant 5: a task whose process died does not stay running: another runner takes"
        " it over once its lease lapsed (the driver's claim of an expired lease)",
        "kvlake/operations/driver.py",
        '            if current.owner not in ("", self.owner) and current.lease_expires > now:\n',
        '            if current.owner not in ("", self.owner):\n',
        (
            "tests/api/test_gc_prepare.py::"
            "test_the_async_preparation_runs_on_the_runner_and_resumes_after_its_death",
        ),
    ),
    Mutation(
        "gc-uncommitted-lists-sealed-tokens",
        "invariant 4: lakeFS's GC client is told of entries a commit in progress sealed",
        "kvlake/catalog/gcprepare.py",
        "            yield from self._entries(name, [branch.staging_token, *branch.sealed_tokens],"
        ' b"")\n',
        '            yield from self._entries(name, [branch.staging_token], b"")\n',
        ("tests/catalog/test_gcprepare.py::test_every_staged_address_is_listed_sealed_tokens_too",),
    ),
    Mutation(
        "task-heartbeat-touches-the-record",
        "invariant 5: a task still running is not taken for a dead one (drive's heartbeat)",
        "kvlake/operations/steps.py",
        "        with Heartbeat(driver, operation_id):\n",
        "        if True:\n",
        (
            "tests/operations/test_steps.py::test_steps_l"
            "onger_than_a_lease_keep_it_by_the_heartbeat",
        ),
    ),
    Mutation(
        "local-imports-off-by-default",
        "issue 15: a local blockstore imports only with KVLAKE_IMPORTS_LOCAL_ENABLED",
        "kvlake/catalog/imports.py",
        "        return scheme in IMPORT_SCHEMES or (scheme == LOCAL_SCHEME and"
        " self._settings.local_enabled)\n",
        "        return scheme in IMPORT_SCHEMES or scheme == LOCAL_SCHEME\n",
        ("tests/catalog/test_local_imports.py",),
    ),
    Mutation(
        "local-import-inside-import-folders",
        "invariant 4a (issue 15): a local import reads only the folders no repository may own",
        "kvlake/catalog/import_sources.py",
        "        if not any(parse_address(allowed).contains(address)"
        " for allowed in self._folders):\n",
        "        if False:\n",
        ("tests/catalog/test_local_imports.py",),
    ),
    Mutation(
        "namespace-outside-import-folders",
        "invariant 4a (issue 15): no repository's GC or purge can list an imported local file",
        "kvlake/lake.py",
        "        check_outside_import_folders(normalised, self.settings.imports.folders())\n",
        "",
        ("tests/catalog/test_local_imports.py", "tests/api/test_local_imports.py"),
    ),
    Mutation(
        "local-import-without-links",
        "invariant 4a (issue 15): a link cannot lead a local import into a repository's namespace",
        "kvlake/blockstore/local.py",
        '        return os.path.realpath(top) == top.rstrip("/") and os.path.isdir(top)\n',
        "        return os.path.isdir(top)\n",
        ("tests/catalog/test_local_imports.py",),
    ),
    Mutation(
        "piece-ranges-start-at-a-sure-boundary",
        "issue 15: pieces written apart join into the metarange one writer makes",
        "kvlake/graveler/committed/manager.py",
        "            if not crc32(key) & mask:  # every writer ends a range here: ours start after"
        " it\n",
        "            if True:\n",
        ("tests/graveler/committed/test_manager.py",),
    ),
    # -- canonical storage addresses (issue 22 #1, issue 23 #6): every check compares the
    # -- form the blockstore reads, segment by segment (kvlake/blockstore/addresses.py)
    Mutation(
        "canonical-drops-empty-and-dot-segments",
        "invariant 7: every spelling the blockstore reads as one place is one address",
        "kvlake/blockstore/addresses.py",
        '    segments = tuple(s for s in path.split("/") if s not in ("", "."))\n',
        '    segments = tuple(path.strip("/").split("/"))\n',
        ("tests/blockstore/test_addresses.py",),
    ),
    Mutation(
        "canonical-refuses-dot-dot",
        "invariant 7: no address climbs out of the place it names",
        "kvlake/blockstore/addresses.py",
        '    if not segments or "\\0" in path or ".." in segments:\n',
        '    if not segments or "\\0" in path:\n',
        ("tests/blockstore/test_addresses.py", "tests/catalog/test_canonical_addresses.py"),
    ),
    Mutation(
        "canonical-contains-segment-wise",
        "invariant 7: `b/p` holds `b/p/x`, not `b/pq`",
        "kvlake/blockstore/addresses.py",
        "        return self.scheme == other.scheme and other.segments[: len(self.segments)]"
        " == self.segments\n",
        "        return self.scheme == other.scheme and str(other).startswith(str(self))\n",
        ("tests/blockstore/test_addresses.py", "tests/catalog/test_canonical_addresses.py"),
    ),
    Mutation(
        "canonical-prefix-overlaps-by-name",
        "issue 22 #1: a name prefix around the namespace (`s3://lake/re`) overlaps it",
        "kvlake/blockstore/addresses.py",
        "    return other.segments[len(folder.segments)].startswith(name)\n",
        "    return False\n",
        ("tests/blockstore/test_addresses.py", "tests/catalog/test_canonical_addresses.py"),
    ),
    Mutation(
        "canonical-blockstore-namespaces",
        "invariant 7: the blockstores resolve a namespace through the one canonical form",
        "kvlake/blockstore/store.py",
        '    path = parse_address(namespace, what="storage namespace").path\n',
        '    path = namespace.split("://", 1)[1].strip("/")\n',
        ("tests/blockstore/test_contract.py::test_every_spelling_of_a_place_is_one_namespace",),
    ),
    Mutation(
        "canonical-import-own-namespace",
        "issue 22 #1: an import of the own namespace is refused in every spelling",
        "kvlake/catalog/import_sources.py",
        "        if prefix_overlaps(address, rest, own):\n",
        "        if False:\n",
        (
            "tests/catalog/test_canonical_addresses.py::"
            "test_an_import_of_the_own_blobs_never_lets_the_deletion_log_delete_a_committed_blob",
        ),
    ),
    Mutation(
        "canonical-import-source-stored",
        "issue 22 #1: an import is stored and imported in the canonical form it was checked in",
        "kvlake/catalog/import_sources.py",
        '        return source._replace(path=f"{folder}/{rest}")\n',
        "        return source\n",
        (
            "tests/catalog/test_canonical_addresses.py::"
            "test_an_accepted_source_is_imported_at_its_canonical_address",
        ),
    ),
    Mutation(
        "canonical-import-permission",
        "issue 23 #6: fs:ImportFromStorage is checked on the canonical source",
        "kvlake/api/routes/imports.py",
        '        source = f"arn:lakefs:fs:::namespace/{_canonical(location.path)}"\n',
        '        source = f"arn:lakefs:fs:::namespace/{location.path}"\n',
        ("tests/api/test_import_spellings.py",),
    ),
    Mutation(
        "canonical-namespace-claim-key",
        "invariant 7: every spelling of a namespace finds its one claim",
        "kvlake/graveler/keys.py",
        '    return canonical_address(namespace, what="storage namespace").encode() + b"/"\n',
        '    return namespace.encode() + b"/"\n',
        (
            "tests/catalog/test_canonical_addresses.py::"
            "test_a_claim_is_found_by_every_spelling_of_its_namespace",
        ),
    ),
    Mutation(
        "canonical-purge-overlaps",
        "invariant 7: a purge sees a live repository on any spelling of its namespace",
        "kvlake/deletion/purge.py",
        "    return parse_address(first).overlaps(parse_address(second))\n",
        "    return first == second\n",
        (
            "tests/catalog/test_canonical_addresses.py::"
            "test_purges_see_every_spelling_of_a_shared_namespace",
        ),
    ),
    Mutation(
        "canonical-import-folders-config",
        "issue 22 #1: KVLAKE_IMPORTS_LOCAL_PREFIXES are read in canonical form",
        "kvlake/config.py",
        '                folder = canonical_address(part) if part.startswith("local://") else ""\n',
        '                folder = part if part.startswith("local://") else ""\n',
        (
            "tests/catalog/test_canonical_addresses.py::"
            "test_import_folders_are_read_in_canonical_form",
        ),
    ),
    Mutation(
        "canonical-namespace-outside-import-folders",
        "issue 22 #1: no spelling puts a namespace in an import folder",
        "kvlake/catalog/import_sources.py",
        "        if address.overlaps(parse_address(folder)):\n",
        "        if str(address) == folder:\n",
        (
            "tests/catalog/test_canonical_addresses.py::"
            "test_no_namespace_lies_in_an_import_folder_in_any_spelling",
        ),
    ),
    Mutation(
        "canonical-link-address-api",
        "invariant 7: linkPhysicalAddress reads an address as the blockstore does",
        "kvlake/api/routes/staging.py",
        '        key = parse_address(given, what="physical address")'
        ".key_in(parse_address(namespace))\n",
        '        key = given.removeprefix(f"{namespace}/")\n',
        (
            "tests/catalog/test_canonical_addresses.py::"
            "test_links_take_every_spelling_of_an_address_in_the_namespace",
        ),
    ),
    # -- canonical: a purge never deletes a kept repository's data (issue 23 #7)
    Mutation(
        "canonical-purge-refuses-kept-data",
        "issue 23 #7: a bare repository on a kept namespace is not purged before a restore",
        "kvlake/deletion/purge.py",
        "        if purge and existing is None:\n"
        "            self._check_nothing_kept(repository)\n",
        "",
        (
            "tests/deletion/test_purge.py::"
            "test_purging_a_bare_repository_on_a_kept_namespace_keeps_the_kept_data",
        ),
    ),
    Mutation(
        "canonical-take-over-inherits-kept",
        "issue 23 #7: the claim of a bare take-over names the kept instance",
        "kvlake/graveler/lifecycle/namespaces.py",
        "                kept = _still_kept(current)\n",
        "",
        (
            "tests/deletion/test_purge.py::"
            "test_purging_a_bare_repository_on_a_kept_namespace_keeps_the_kept_data",
        ),
    ),
    Mutation(
        "canonical-kept-passed-on",
        "issue 23 #7: a kept namespace passed on unrestored still names every kept instance",
        "kvlake/graveler/lifecycle/namespaces.py",
        '        return (*current.kept, f"{current.repository}/{current.instance_uid}")\n',
        '        return (f"{current.repository}/{current.instance_uid}",)\n',
        (
            "tests/deletion/test_purge.py::"
            "test_a_kept_namespace_passed_on_unrestored_still_refuses_the_purge",
        ),
    ),
    Mutation(
        "canonical-restore-releases-kept",
        "issue 23 #7: restoring the kept refs makes the kept data the restorer's own",
        "kvlake/graveler/dump.py",
        "        self._on_restored(repository, manifest)\n",
        "",
        (
            "tests/deletion/test_purge.py::"
            "test_a_purge_after_the_kept_refs_were_restored_deletes_the_namespace",
        ),
    ),
    # -- issue 22, findings 4, 5, 6 and 9: bulk deletes racing bulk deletes and commits --
    Mutation(
        "bulkrace-clean-head-publish-keeps-tombstone-tokens",
        "issue 22 #9: a publish on a clean head keeps the staging token's tombstone-token listing",
        "kvlake/graveler/records.py",
        "            tombstone_tokens=self.tombstone_tokens_among((staging, *sealed)),\n",
        "",
        (
            "tests/graveler/test_range_tombstones.py::test_a_p"
            "ublish_on_a_clean_head_keeps_the_tokens_listing",
        ),
    ),
    Mutation(
        "bulkrace-tombstone-guard-is-compare-and-swapped",
        "issue 22 #4: one atomic step decides which metarange a token's records come from",
        "kvlake/graveler/staging/range_tombstones.py",
        "                store.set_if(partition, GUARD_KEY, metarange_id.encode(), None)\n",
        "                store.set(partition, GUARD_KEY, metarange_id.encode())\n",
        (
            "tests/interleavings/test_operations.py"
            "::test_a_bulk_delete_run_whole_at_each_staging_write_of_another_is_refused[local]",
        ),
    ),
    Mutation(
        "bulkrace-tombstone-guard-refuses-another-metarange",
        "issue 22 #4: a token takes range tombstones of one metarange only",
        "kvlake/graveler/staging/range_tombstones.py",
        "        if raw.decode() != metarange_id:\n",
        "        if False:\n",
        ("tests/graveler/test_range_tombstones.py::test_records_of_another_metarange_are_refused",),
    ),
    Mutation(
        "bulkrace-refused-ranges-get-tombstones",
        "issue 22 #4: ranges whose records a token refuses are deleted by tombstones",
        "kvlake/operations/batches.py",
        "            return self._delete(operation, repository, paths, [], held)\n",
        "            return [(path, str(exc)) for path in paths]\n",
        (
            "tests/operations/test_range_batches.py"
            "::test_ranges_whose_records_are_refused_get_tombstones_instead",
        ),
    ),
    Mutation(
        "bulkrace-tombstone-guard-is-no-staged-change",
        "issue 22 #4: a token holding only its tombstone guard is clean",
        "kvlake/graveler/staging/store.py",
        "scan(keys.staging_partition(token), RECORD_PREFIX, batch_size=1)",
        "scan(keys.staging_partition(token), batch_size=1)",
        ("tests/graveler/test_range_tombstones.py::test_resets_lift_tombstoned_keys",),
    ),
    Mutation(
        "bulkrace-untangle-rewrites-overlaps",
        "issue 22 #4: a branch wedged by overlapping records is repaired",
        "kvlake/graveler/staging/range_tombstones.py",
        "            if last is None or record.min_key > last:\n",
        "            if True:\n",
        (
            "tests/graveler/test_range_tombstones.py::test_a_b"
            "ranch_wedged_by_overlapping_records_is_untangled",
        ),
    ),
    Mutation(
        "bulkrace-untangle-keeps-what-was-hidden",
        "issue 22 #4: the repair stages a tombstone for each key the dropped record hid",
        "kvlake/graveler/staging/range_tombstones.py",
        "                    self._store.set_if(partition, key, TOMBSTONE, None)\n",
        "                    pass\n",
        (
            "tests/graveler/test_range_tombstones.py::test_a_b"
            "ranch_wedged_by_overlapping_records_is_untangled",
        ),
    ),
    Mutation(
        "bulkrace-enumeration-checks-its-snapshot-at-each-batch",
        "issue 22 #5: a batch listed across a token drop is listed again, not written short",
        "kvlake/operations/bulk_delete_driver.py",
        "                if not self._listing_holds(held, snapshot, taken):\n"
        "                    return  # staged entries may be gone from it: list again from the"
        " cursor\n",
        "",
        ("tests/operations/test_stale_listings.py",),
    ),
    Mutation(
        "bulkrace-enumeration-checks-its-snapshot-at-the-end",
        "issue 22 #5: a listing that ended across a token drop is listed again",
        "kvlake/operations/bulk_delete_driver.py",
        "        if not self._listing_holds(held, snapshot, taken):\n"
        "            return  # as above: nothing of this listing is written\n",
        "",
        ("tests/operations/test_stale_listings.py",),
    ),
    Mutation(
        "bulkrace-enumeration-snapshot-needs-its-tokens",
        "issue 22 #5: a snapshot holds only while the branch still references its tokens",
        "kvlake/operations/snapshots.py",
        "    return set(snapshot.staging_tokens) <= set(current.tokens())\n",
        "    return True\n",
        ("tests/operations/test_stale_listings.py",),
    ),
    # Availability against anonymous and unprivileged clients (issue 23, findings 1 and 2).
    Mutation(
        "availability-in-flight-limit",
        "issue 23 finding 1: requests in flight beyond the limit get 503",
        "kvlake/api/inflight.py",
        "        if self.in_flight >= self.limit:\n",
        "        if False:\n",
        (
            "tests/api/test_limits.py::test_requests_in_flight_beyond_t"
            "he_limit_get_503_and_idle_connections_do_not_count[local]",
        ),
    ),
    Mutation(
        "availability-idle-connections-not-counted",
        "issue 23 finding 1: idle sockets do not count against the request limit",
        "kvlake/api/server.py",
        "        # Not uvicorn's limit_concurrency: it counts idle sockets too (issue 23)."
        " Requests\n",
        "        limit_concurrency=settings.server.max_connections,\n",
        (
            "tests/api/test_limits.py::test_requests_in_flight_beyond_t"
            "he_limit_get_503_and_idle_connections_do_not_count[local]",
            "tests/api/test_hostile_availability.py::test_idle_and_tr"
            "ickling_connections_leave_the_server_available[sqlite]",
        ),
    ),
    Mutation(
        "availability-head-deadline",
        "issue 23 finding 1: a fresh connection must send a whole head within the deadline",
        "kvlake/api/connections.py",
        "        self._arm_head_deadline()\n",
        "",
        (
            "tests/api/test_limits.py::test_a_connection_"
            "must_send_its_head_in_time[httptools-local]",
        ),
    ),
    Mutation(
        "availability-head-deadline-after-response",
        "issue 23 finding 1: the next head on a kept-alive connection has the same deadline",
        "kvlake/api/connections.py",
        "        self._arm_head_deadline()  # the next request's head has the same time\n",
        "",
        (
            "tests/api/test_limits.py"
            "::test_a_request_whose_head_came_in_time_outlives_the_head_deadline[local-httptools]",
        ),
    ),
    Mutation(
        "availability-head-deadline-spares-requests",
        "issue 23 finding 1: the head deadline never cuts a request whose head came in time",
        "kvlake/api/connections.py",
        "        if cycle is not None and not cycle.response_complete:\n",
        "        if False:\n",
        (
            "tests/api/test_limits.py::test_a_request_whose_head_cam"
            "e_in_time_outlives_the_head_deadline[local-httptools]",
        ),
    ),
    Mutation(
        "availability-client-connections",
        "issue 23 finding 1: one address holds at most its share of a process's connections",
        "kvlake/api/connections.py",
        "        if held >= self.max_per_client:\n",
        "        if False:\n",
        (
            "tests/api/test_limits.py::test_one_address_holds_a"
            "t_most_its_share_of_connections[httptools-local]",
        ),
    ),
    Mutation(
        "availability-public-body-cap",
        "issue 23 finding 2: an operation without credentials takes a tiny body",
        "kvlake/api/routing.py",
        "            budget, max_json = limits.public_budget, bodies.PUBLIC_MAX_JSON_BYTES\n",
        "            budget, max_json = limits.public_budget, bodies.MAX_JSON_BYTES\n",
        (
            "tests/api/test_limits.py::test_a_public_operation_takes_a_tiny_body[local]",
            "tests/api/test_hostile_availability.py::test_s"
            "low_bodies_leave_the_server_available[sqlite]",
        ),
    ),
    Mutation(
        "availability-public-budget",
        "issue 23 finding 2: operations without credentials have a body budget of their own",
        "kvlake/api/routing.py",
        "            budget, max_json = limits.public_budget, bodies.PUBLIC_MAX_JSON_BYTES\n",
        "            budget, max_json = limits.budget, bodies.PUBLIC_MAX_JSON_BYTES\n",
        ("tests/api/test_limits.py::test_public_bodies_have_a_budget_of_their_own[local]",),
    ),
    Mutation(
        "availability-whole-body-deadline",
        "issue 23 finding 2: a body averaging less than the minimum rate is cut (408)",
        "kvlake/http/bodies.py",
        "        wait = min(pace.read_timeout, left)\n",
        "        wait = pace.read_timeout\n",
        (
            "tests/api/test_limits.py::test_a_trickled_body_is_"
            "cut_at_its_whole_body_deadline[local-read-whole]",
            "tests/api/test_limits.py::test_a_trickled_body_is"
            "_cut_at_its_whole_body_deadline[local-streamed]",
        ),
    ),
    Mutation(
        "availability-authorize-uploads-before-body",
        "issue 23 finding 2: an upload is authorized from its headers before its body is read",
        "kvlake/api/routing.py",
        "            await loop.run_in_executor(requests, _authorize, operation, call)\n",
        "            pass\n",
        (
            "tests/api/test_limits.py::test_an_upload_without_perm"
            "ission_is_refused_before_its_body[local-read-whole]",
        ),
    ),
    Mutation(
        "availability-client-body-share",
        "issue 23 finding 2: one address holds at most its share of a body budget",
        "kvlake/api/body.py",
        "            return self.used + size <= self.limit and self.held(client) + size"
        " <= self.client_limit\n",
        "            return self.used + size <= self.limit\n",
        (
            "tests/api/test_limits.py::test_one_address_hold"
            "s_at_most_its_share_of_the_body_budget[local]",
        ),
    ),
    # -- the S3 gateway (issue 24) ----------------------------------------------------------
    Mutation(
        "gateway-sigv4-signature",
        "issue 24: a SigV4 request signed with another secret is refused",
        "kvlake/gateway/call.py",
        "        return sigv4.matches(sigv4.sign(key, string_to_sign), signature.signature)\n",
        "        return True\n",
        ("tests/gateway/test_errors.py::test_a_wrong_secret_does_not_match[sqlite]",),
    ),
    Mutation(
        "gateway-sigv2-signature",
        "issue 24: a V2 presigned URL changed after signing is refused",
        "kvlake/gateway/call.py",
        "        return sigv4.matches(sign_v2(secret, string_to_sign), signature.signature)\n",
        "        return True\n",
        ("tests/gateway/test_boto3.py::test_presigned_urls_read_and_write[sqlite-s3]",),
    ),
    Mutation(
        "gateway-clock-skew",
        "issue 24: a request signed over 15 minutes from the server's clock is refused",
        "kvlake/gateway/sigv4.py",
        "    if abs(now - moment) > MAX_SKEW_SECONDS:\n",
        "    if False:\n",
        (
            "tests/gateway/test_signatures.py::test_a_reque"
            "st_signed_more_than_15_minutes_away_is_skewed",
            "tests/gateway/test_errors.py::test_a_skewed_clock[sqlite]",
        ),
    ),
    Mutation(
        "gateway-presign-expiry",
        "issue 24: a presigned URL past its expiry is refused",
        "kvlake/gateway/sigv4.py",
        "        if now > moment + signature.expires:\n",
        "        if False:\n",
        ("tests/gateway/test_signatures.py::test_a_presigned_url_past_its_expiry_is_refused",),
    ),
    Mutation(
        "gateway-chunk-signature",
        "issue 24: a signed aws-chunked stream with a changed byte is refused",
        "kvlake/gateway/chunked.py",
        "            if not matches(expected, given.strip()):\n",
        "            if False:\n",
        ("tests/gateway/test_signatures.py::test_a_changed_byte_in_a_signed_stream_is_refused",),
    ),
    Mutation(
        "gateway-checksum",
        "issue 24: a body whose x-amz-checksum-* does not match is never staged",
        "kvlake/gateway/digests.py",
        "            if digest.digest() != expected.checksums.get(name):\n",
        "            if False:\n",
        (
            "tests/gateway/test_errors.py::test_a_streamed_upload_"
            "whose_trailer_does_not_match_leaves_nothing[sqlite]",
        ),
    ),
    Mutation(
        "gateway-declared-trailer",
        "issue 24: a stream that drops its declared checksum trailer is refused",
        "kvlake/gateway/digests.py",
        "        if self.trailer and self.trailer[len(CHECKSUM_PREFIX) :] not in self.checksums:\n",
        "        if False:\n",
        (
            "tests/gateway/test_signatures.py::test_a_str"
            "eam_without_its_declared_trailer_is_refused",
        ),
    ),
    Mutation(
        "gateway-content-md5",
        "issue 24: a body whose Content-MD5 does not match is never staged",
        "kvlake/gateway/digests.py",
        "        if self._md5 is not None and self._md5.digest() != expected.md5:\n",
        "        if False:\n",
        (
            "tests/gateway/test_errors.py::test_a_wrong_conte"
            "nt_md5_is_bad_digest_and_leaves_nothing[sqlite]",
        ),
    ),
    Mutation(
        "gateway-authorize",
        "issue 24: every S3 request is authorized by the REST API's policies",
        "kvlake/gateway/app.py",
        "    call.authorize(operation.needs(call))\n",
        "",
        (
            "tests/gateway/test_errors.py::test_policies_a"
            "pply_a_viewer_reads_but_cannot_write[sqlite]",
        ),
    ),
    Mutation(
        "gateway-authorize-each-deleted-key",
        "issue 24: DeleteObjects authorizes every key it deletes",
        "kvlake/gateway/writing.py",
        '            call.authorize([Permission("fs:DeleteObject",'
        " object_arn(repository.name, path))])\n",
        "",
        (
            "tests/gateway/test_errors.py::test_policies_a"
            "pply_a_viewer_reads_but_cannot_write[sqlite]",
        ),
    ),
    Mutation(
        "gateway-dot-segments",
        "issue 24: a key with '.' or '..' segments is refused",
        "kvlake/gateway/writing.py",
        '    if any(part in (".", "..") for part in path.split("/")):\n',
        "    if False:\n",
        (
            "tests/gateway/test_errors.py::test_keys_with_dot_"
            "segments_or_nul_are_refused[sqlite-main/a/../b]",
        ),
    ),
    Mutation(
        "gateway-copy-one-repository",
        "issue 24: a copy source in another repository is refused",
        "kvlake/gateway/writing.py",
        "    if bucket != call.target.bucket:\n",
        "    if False:\n",
        (
            "tests/gateway/test_errors.py::test_a_copy_from_anot"
            "her_repository_or_a_missing_ref_is_refused[sqlite]",
        ),
    ),
    Mutation(
        "gateway-signature-cache-rechecks",
        "issue 24: a cached signing key still checks every signature",
        "kvlake/auth/authenticator.py",
        "        if cached is not None and signed_with(cached[1]):\n",
        "        if cached is not None:\n",
        (
            "tests/auth/test_authenticator.py::test_a_wron"
            "g_signature_is_never_answered_from_the_cache",
        ),
    ),
    Mutation(
        "gateway-host-signed",
        "issue 24: a signature must cover the Host header (no replay to another host)",
        "kvlake/gateway/sigv4.py",
        '    if "host" not in names:\n',
        "    if False:\n",
        (
            "tests/gateway/test_signatures.py::test_a_signa"
            "ture_that_does_not_cover_the_host_is_refused",
        ),
    ),
    Mutation(
        "gateway-xml-body-read-whole",
        "issue 24: an XML request body is read (and its digest checked) to its end",
        "kvlake/gateway/writing.py",
        "    while chunk := body.read(64 << 10):\n",
        "    for chunk in [body.read(64 << 10)]:\n",
        (
            "tests/gateway/test_boto3.py"
            "::test_delete_objects_of_a_thousand_long_keys_reads_the_whole_request[sqlite]",
        ),
    ),
    Mutation(
        "gateway-body-budget",
        "issue 24: gateway bodies hold the same per-process budget as the REST API's",
        "kvlake/gateway/app.py",
        "            if limits is None or not with_body:\n",
        "            if True:\n",
        ("tests/gateway/test_limits.py",),
    ),
    Mutation(
        "gateway-close-unread-body",
        "issue 24: a request refused before its body was read ends its connection",
        "kvlake/gateway/app.py",
        '            response.headers["Connection"] = "close"\n',
        "            pass\n",
        ("tests/gateway/test_boto3.py::test_if_none_match_star_refuses_to_overwrite[sqlite]",),
    ),
    # sparkdata (issue 25): the kvlake source reading and writing datasets' rows.
    Mutation(
        "sparkdata-prune-only-what-cannot-match",
        "issue 25: partition pruning skips a file only when a filter is surely false for it",
        "kvlake/pipelines/partitions.py",
        "    return outcome is not False\n",
        "    return outcome is True\n",
        (
            "tests/pipelines/test_datasets.py::test_a_partiti"
            "on_filter_opens_only_the_matching_files[local]",
        ),
    ),
    Mutation(
        "sparkdata-prune-compares-like-types",
        "issue 25: a literal of another type (2025 against '2025') never prunes a file",
        "kvlake/pipelines/partitions.py",
        '        if kind == "In" and all(_comparable(value, item) for item in condition.value):\n',
        '        if kind == "In":\n',
        (
            "tests/pipelines/test_datasets.py::test_a_partiti"
            "on_filter_opens_only_the_matching_files[local]",
        ),
    ),
    Mutation(
        "sparkdata-skip-non-data-files",
        "issue 25: _SUCCESS, _temporary/ and .crc files are not read as data",
        "kvlake/pipelines/datasets.py",
        '        segment.startswith(".") or (segment.startswith("_") and "=" not in segment)\n',
        "        False\n",
        (
            "tests/pipelines/test_datasets.py::test_csv_and_j"
            "son_with_spark_options_and_a_projection[local]",
        ),
    ),
    Mutation(
        "sparkdata-differing-schemas-need-merge",
        "issue 25: a file lacking a column of the dataset's schema fails without mergeSchema",
        "kvlake/pipelines/formats.py",
        '        if missing and not _flag(options, "mergeschema"):\n',
        "        if False:\n",
        ("tests/pipelines/test_datasets.py::test_differing_schemas_need_merge_schema[local]",),
    ),
    Mutation(
        "sparkdata-open-cost-spreads-tiny-files",
        "issue 25: files grouped by size count the cost of opening each",
        "kvlake/pipelines/datasets.py",
        "        if current and used + cost > max_bytes:\n",
        "        if current and used + file.size > max_bytes:\n",
        ("tests/pipelines/test_datasets.py::test_files_are_grouped_into_tasks_by_size",),
    ),
    # -- authz (issue 23: bulk deletes and stageObject ask what the plain request asks) --
    Mutation(
        "authz-deny-under-a-prefix",
        "issue 23 #3: a deny matching any resource under a prefix refuses the prefix",
        "kvlake/auth/policies.py",
        "        return matches_under(resource, permission.resource)\n",
        "        return match(resource, permission.resource)\n",
        ("tests/auth/test_policies.py",),
    ),
    Mutation(
        "authz-allow-covers-the-prefix",
        "issue 23 #3: an allow grants a prefix only if it matches everything under it",
        "kvlake/auth/policies.py",
        "        return covers_under(resource, permission.resource)\n",
        "        return matches_under(resource, permission.resource)\n",
        ("tests/auth/test_policies.py",),
    ),
    Mutation(
        "authz-bulk-delete-asks-under-the-prefix",
        "issue 23 #3: a bulk delete needs fs:DeleteObject on every path under its prefix",
        "kvlake/api/routes/operations.py",
        "path.prefix), under=True)]\n",
        'path.prefix + "*"))]\n',
        ("tests/api/test_hostile_policies.py::test_a_bulk_delete_over_a_denied_path_is_refused",),
    ),
    Mutation(
        "authz-bulk-delete-commit-needs-create-commit",
        "issue 23 #4: a bulk delete's commit option needs fs:CreateCommit on the branch",
        "kvlake/api/routes/operations.py",
        "    if call.body is not None and call.body.commit is not None:\n",
        "    if False:\n",
        (
            "tests/api/test_hostile_policies.py::test_a_b"
            "ulk_delete_that_commits_needs_create_commit",
        ),
    ),
    Mutation(
        "authz-stage-object-needs-read-proof",
        "issue 23 #5: stageObject needs proof the caller may read the blob",
        "kvlake/api/routes/staging.py",
        "    check_read_proof(call)\n",
        "",
        (
            "tests/api/test_hostile_policies.py::test_stagi"
            "ng_a_blob_needs_proof_the_caller_may_read_it",
        ),
    ),
    Mutation(
        "authz-stage-object-ticket-must-verify",
        "issue 23 #5: only a live ticket for the same branch and path is proof of a read",
        "kvlake/catalog/direct.py",
        "        except InvalidInputError:\n            return False\n",
        "        except InvalidInputError:\n            return True\n",
        (
            "tests/api/test_hostile_policies.py::test_stagi"
            "ng_a_blob_needs_proof_the_caller_may_read_it",
        ),
    ),
    Mutation(
        "authz-link-checks-before-marking",
        "issue 23: a link refused for a missing blob or a wrong size leaves no shared mark",
        "kvlake/catalog/links.py",
        "        self._check_blob(namespace, address, physical_address, size)\n"
        "        entry = ObjectEntry(\n",
        "        entry = ObjectEntry(\n",
        ("tests/catalog/test_links.py::test_a_link_refused_for_its_blob_leaves_no_mark",),
    ),
    Mutation(
        "authz-request-sizes-fit-64-bits",
        "issue 23 (invariant 6): a size past what a record stores is a 400, not a 500",
        "kvlake/api/wire/common.py",
        "Count = Annotated[int, msgspec.Meta(ge=0, le=INT64_MAX)]\n",
        "Count = Annotated[int, msgspec.Meta(ge=0)]\n",
        ("tests/api/test_wire_integers.py",),
    ),
    Mutation(
        "authz-request-integers-fit-64-bits",
        "issue 23 (invariant 6): an integer past what a record stores is a 400, not a 500",
        "kvlake/api/wire/common.py",
        "Integer = Annotated[int, msgspec.Meta(ge=-INT64_MAX - 1, le=INT64_MAX)]\n",
        "Integer = int\n",
        ("tests/api/test_wire_integers.py",),
    ),
    # -- canonical: one GC run per repository across processes, a lease in the KV (issue 22 #8)
    Mutation(
        "canonical-gc-lease-refuses-a-live-lease",
        "issue 22 #8: a second GC run of a repository is refused, in any process",
        "kvlake/pipelines/gc/lease.py",
        "                if lease.expires > now:\n"
        "                    raise ConflictError(_busy(lease, now))\n",
        "",
        (
            "tests/pipelines/test_gc_lease.py::"
            "test_a_second_run_in_another_process_is_refused_naming_the_running_one",
        ),
    ),
    Mutation(
        "canonical-gc-lease-compare-and-swap",
        "issue 22 #8: of two starts at once, exactly one takes the lease",
        "kvlake/pipelines/gc/lease.py",
        "            encoded = update(self._store, GC_LEASES, key, take, what=what,"
        " tries=_MAX_TRIES)\n",
        "            loaded = get_or_none(self._store, GC_LEASES, key)\n"
        "            encoded = take(loaded[0] if loaded else None)\n"
        "            self._store.set(GC_LEASES, key, encoded)\n",
        (
            "tests/pipelines/test_gc_lease.py::"
            "test_of_two_starts_at_once_exactly_one_takes_the_lease",
        ),
    ),
    Mutation(
        "canonical-gc-lease-renewal-is-the-holders",
        "issue 22 #8: a lapsed lease taken over is never renewed by its old holder",
        "kvlake/pipelines/gc/lease.py",
        "            self._store.set_if(GC_LEASES, lease.repository.encode(), encoded,"
        " held.predicate)\n",
        "            self._store.set(GC_LEASES, lease.repository.encode(), encoded)\n",
        (
            "tests/pipelines/test_gc_lease.py::"
            "test_a_renewed_lease_holds_and_a_lapsed_one_is_taken_over",
        ),
    ),
    Mutation(
        "canonical-gc-lease-renewed-while-running",
        "issue 22 #8: a running holder keeps renewing its lease",
        "kvlake/pipelines/gc/lease.py",
        "            try:\n                self.renew()\n",
        "            try:\n                pass\n",
        (
            "tests/pipelines/test_gc_lease.py::"
            "test_a_running_holder_keeps_its_lease_past_many_lease_times",
        ),
    ),
    Mutation(
        "canonical-gc-phase-checks-the-lease",
        "issue 22 #8: a run that lost its lease starts no further phase",
        "kvlake/pipelines/gc/collector.py",
        "        held.check()  # a run that lost its lease starts no phase: another run has it"
        " now\n",
        "",
        (
            "tests/pipelines/test_gc_lease.py::"
            "test_a_run_that_lost_its_lease_stops_before_its_next_phase_deletes_anything",
        ),
    ),
    Mutation(
        "canonical-gc-runs-take-the-lease",
        "issue 22 #8: a server refuses a GC run while another process runs one",
        "kvlake/pipelines/gc/collector.py",
        "        with self._leases.acquire(repository, run_id) as held:\n            yield held\n",
        '        yield self._leases.acquire(f"{repository}-elsewhere", run_id)\n',
        (
            "tests/pipelines/test_gc_lease.py::"
            "test_the_command_refuses_a_run_while_a_server_runs_one",
        ),
    ),
    Mutation(
        "canonical-gc-api-runs-take-the-lease",
        "issue 22 #8: a server's GC run takes the lease before it answers 202",
        "kvlake/pipelines/gc/runs.py",
        "        held = self._leases.acquire(repository, run_id)\n",
        '        held = self._leases.acquire(f"{repository}-elsewhere", run_id)\n',
        (
            "tests/pipelines/test_gc_lease.py::"
            "test_a_server_refuses_a_run_while_the_command_runs_one",
        ),
    ),
    Mutation(
        "canonical-gc-marks-read-imported-spellings",
        "issue 22 #1: GC keeps a blob an imported entry names by another spelling",
        "kvlake/catalog/references.py",
        "        return parse_address(stat.address).key_in(parse_address(namespace))\n",
        '        return ""\n',
        (
            "tests/pipelines/test_gc.py::"
            "test_an_entry_imported_by_another_spelling_of_the_namespace_keeps_its_blob",
        ),
    ),
    Mutation(
        "canonical-restore-of-an-old-dump-matches-by-name",
        "issue 23 #7: a dump made before dumps named their instance still releases the kept data",
        "kvlake/graveler/lifecycle/namespaces.py",
        '                and not (not manifest.instance_uid and k.rpartition("/")[0] =='
        " manifest.repository)\n",
        "",
        (
            "tests/deletion/test_purge.py::"
            "test_a_dump_made_before_dumps_named_their_instance_is_matched_by_name",
        ),
    ),
    Mutation(
        "bulkrace-range-batch-keeps-what-was-deleted-at-enumeration",
        "issue 22 #6: a range key deleted when the span was listed is kept out of the record",
        "kvlake/operations/batches.py",
        "                if key in gone:\n"
        "                    keep.append(key)  # not this operation's to delete, whatever comes"
        " there\n"
        "                    continue\n",
        "",
        (
            "tests/operations/test_range_batches.py"
            "::test_objects_restored_or_written_under_the_prefix_after_enumeration_stay",
        ),
    ),
    Mutation(
        "bulkrace-range-batch-spares-keys-written-again",
        "issue 22 #6: a range key deleted at enumeration and written again since stays",
        "kvlake/operations/batches.py",
        "                if key in gone:\n"
        "                    continue  # deleted when enumeration found the span: restored since\n",
        "",
        (
            "tests/operations/test_range_batches.py"
            "::test_objects_restored_or_written_under_the_prefix_after_enumeration_stay",
        ),
    ),
    Mutation(
        "bulkrace-range-batch-spares-new-keys",
        "issue 22 #6: an object new in a range batch's span since enumeration stays",
        "kvlake/operations/batches.py",
        "                if key not in ranged:\n"
        "                    continue  # new in the span since enumeration found it\n",
        "",
        (
            "tests/operations/test_range_batches.py"
            "::test_objects_restored_or_written_under_the_prefix_after_enumeration_stay",
        ),
    ),
    Mutation(
        "bulkrace-span-read-fails-across-the-real-token-drop",
        "issue 22 #5: a span read across a commit and the real token-drop delay fails",
        "kvlake/graveler/spans.py",
        "        yield from self._entries(repository, span.state, span.start, span.stop)\n"
        "        self._check_tokens(repository, span.state)\n",
        "        yield from self._entries(repository, span.state, span.start, span.stop)\n",
        (
            "tests/graveler/test_spans.py"
            "::test_a_token_dropped_mid_read_after_the_real_delay_fails_the_read",
        ),
    ),
    Mutation(
        "sparkdata-commit-keeps-staged",
        "issue 25: a job's commit leaves what others staged on the branch staged",
        "kvlake/graveler/history/imports.py",
        "        if keep_staged:\n",
        "        if False:\n",
        ("tests/graveler/test_imports.py",),
    ),
    Mutation(
        "sparkdata-task-logs-blob-before-writing",
        "invariant 4 (issue 25): a task's blob has its deletion record before it exists",
        "kvlake/pipelines/dataset_writer.py",
        "    lake.deletion_log.append([record])\n",
        "",
        (
            "tests/pipelines/test_dataset_writes.py::test_a_job_failing"
            "_at_its_commit_leaves_nothing_and_logs_every_blob[local]",
        ),
    ),
    Mutation(
        "sparkdata-committed-blobs-marked-shared",
        "invariant 4a (issue 25): a committed job's blobs are never deleted by their records",
        "kvlake/pipelines/dataset_commit.py",
        "        lake.deletion_log.mark_shared(repository.instance_uid, file.address)\n",
        "        pass\n",
        (
            "tests/pipelines/test_dataset_writes.py::test_a_job_commi"
            "ts_its_files_once_and_they_read_back_row_for_row[local]",
        ),
    ),
    Mutation(
        "sparkdata-overwrite-replaces-the-path",
        "issue 25: overwrite replaces everything under the path in the job's one commit",
        "kvlake/pipelines/dataset_commit.py",
        "        prefixes=[target.root.encode()] if overwrite else [],\n",
        "        prefixes=[],\n",
        (
            "tests/pipelines/test_dataset_writes.py::test_overwrite"
            "_replaces_the_path_in_one_commit_and_the_modes[local]",
        ),
    ),
    Mutation(
        "sparkdata-commit-checks-protection",
        "issue 25: a rule forbidding commits that appears during the job stops its commit",
        "kvlake/pipelines/dataset_commit.py",
        "    lake.graveler.protection.check(repository, target.branch,"
        " _action(target.message))\n"
        "    check_unlocked(lake, repository, target.branch, target.root)\n",
        "",
        (
            "tests/pipelines/test_dataset_writes.py::test_a_job_failing"
            "_at_its_commit_leaves_nothing_and_logs_every_blob[local]",
        ),
    ),
    Mutation(
        "sparkdata-write-checks-locks",
        "issue 25: write locks and bulk deletes over the path refuse a job before any task",
        "kvlake/pipelines/dataset_commit.py",
        "    check_unlocked(lake, repository, parsed.branch, root)\n",
        "",
        (
            "tests/pipelines/test_dataset_writes.py::test_b"
            "ad_writes_are_refused_before_any_task[local]",
        ),
    ),
    Mutation(
        "sparkdata-keep-staged-keeps-sealed-tokens",
        "invariant 2 (issue 25): a job's commit keeps the tokens a running commit sealed",
        "kvlake/graveler/history/commits.py",
        "                return branch.with_tokens(commit_id=commit_id)\n",
        "                return branch.with_tokens(commit_id=commit_id, sealed_tokens=())\n",
        (
            "tests/graveler/test_imports.py::"
            "test_a_commit_racing_a_keep_staged_commit_at_any_call_loses_nothing",
        ),
    ),
    Mutation(
        "sparkdata-replayed-batch-skipped",
        "issue 25: a replayed micro-batch (its batch id in the branch's history) commits nothing",
        "kvlake/pipelines/stream_writer.py",
        "            if done is not None and done >= batchId:\n",
        "            if False:\n",
        (
            "tests/pipelines/test_stream_sink.py::"
            "test_a_replayed_micro_batch_is_recognised_from_history_and_committed_once[local]",
        ),
    ),
    # presign: imports and presigned uploads (issue 23).
    Mutation(
        "presign-import-source-asked-under",
        "issue 23 #3 for imports: a folder import needs fs:ImportFromStorage under its source",
        "kvlake/api/routes/imports.py",
        'needs.append(Permission("fs:ImportFromStorage", source, under=folder))',
        'needs.append(Permission("fs:ImportFromStorage", source))',
        ("tests/api/test_hostile_policies.py::test_an_import_over_a_denied_sub_prefix_is_refused",),
    ),
    Mutation(
        "presign-import-destination-asked-under",
        "issue 23 #3 for imports: a folder import needs fs:WriteObject under its destination",
        "kvlake/api/routes/imports.py",
        'needs.append(Permission("fs:WriteObject", destination, under=folder))',
        'needs.append(Permission("fs:WriteObject", destination))',
        ("tests/api/test_hostile_policies.py::test_an_import_over_a_denied_sub_prefix_is_refused",),
    ),
    # -- locks (issue 22 findings 2, 3, 7; issue 23's low items on locks and operations) --
    Mutation(
        "locks-batch-renews-its-delete-lock",
        "issue 22 #2: a batch renews the delete lock before it reads its write locks",
        "kvlake/operations/batches.py",
        "        held.renew()  # before the write locks are read: see"
        " kvlake/operations/renewal.py\n",
        "",
        ("tests/operations/test_delete_locks.py::test_the_delete_lock_is_renewed_for_each_batch",),
    ),
    Mutation(
        "locks-enumeration-keeps-its-lock-alive",
        "issue 22 #2: a long enumeration renews the lease and the delete lock while it lists",
        "kvlake/operations/bulk_delete_driver.py",
        "        for key, value in listing:\n            self._keep_alive(held)\n",
        "        for key, value in listing:\n",
        (
            "tests/operations/test_delete_locks.py"
            "::test_the_delete_lock_lives_through_an_enumeration_that_keeps_nothing_for_long",
        ),
    ),
    Mutation(
        "locks-checkpoint-renews-the-delete-lock",
        "issue 22 #2: the delete lock is renewed wherever the lease is (each checkpoint)",
        "kvlake/operations/bulk_delete_driver.py",
        "        if not held.operation.options.dry_run:\n"
        "            self._lock(held)  # the lock lives as long as the lease",
        "        if False:\n            self._lock(held)  # the lock lives as long as the lease",
        (
            "tests/operations/test_delete_locks.py"
            "::test_the_delete_lock_lives_through_an_enumeration_that_keeps_nothing_for_long",
        ),
    ),
    Mutation(
        "locks-lapse-checked-before-the-blind-write",
        "issue 22 #2: a batch whose delete lock lapsed re-reads the write locks before writing",
        "kvlake/operations/batches.py",
        "        if held.lapsed():\n            paths, raced = self._relocked(repository, paths)\n",
        "",
        (
            "tests/interleavings/test_operations.py"
            "::test_a_delete_lock_lapsing_mid_batch_is_renewed_before_the_blind_write",
        ),
    ),
    Mutation(
        "locks-lapsed-lock-is-renewed",
        "issue 22 #2: a lapsed delete lock is renewed before the write locks are read again",
        "kvlake/operations/renewal.py",
        "        self.renew()\n        return True\n",
        "        return True\n",
        (
            "tests/interleavings/test_operations.py"
            "::test_a_delete_lock_lapsing_mid_batch_is_renewed_before_the_blind_write",
        ),
    ),
    Mutation(
        "locks-renewal-never-recreates-a-released-lock",
        "issue 22 #2: a batch of a finished operation does not bring its delete lock back",
        "kvlake/operations/locks.py",
        "            if raw is None:\n"
        "                raise PreconditionFailedError(\n"
        '                    f"bulk delete operation {operation_id} holds no delete lock',
        "            if False:\n"
        "                raise PreconditionFailedError(\n"
        '                    f"bulk delete operation {operation_id} holds no delete lock',
        (
            "tests/operations/test_delete_locks.py"
            "::test_a_released_delete_lock_is_never_renewed_back",
        ),
    ),
    Mutation(
        "locks-deep-copy-takes-the-write-lock",
        "issue 22 #3: a deep or shallow copy holds its path's write lock (meets delete locks)",
        "kvlake/catalog/catalog.py",
        "        with self.guard.writing(repository, branch, path, owner=owner) as write:\n"
        "            if not shallow",
        "        with StagingGuard(self.graveler, None).writing(repository, branch, path,"
        " owner=owner) as write:\n            if not shallow",
        (
            "tests/interleavings/test_operations.py"
            "::test_a_new_blob_landing_between_the_tombstone_read_and_write_is_never_orphaned",
            "tests/operations/test_delete_locks.py",
        ),
    ),
    Mutation(
        "locks-direct-link-takes-the-write-lock",
        "issue 22 #3: linkPhysicalAddress (and multipart completion) holds the write lock",
        "kvlake/catalog/direct.py",
        "        with self._guard.writing(repository, branch, path, owner=owner) as write:\n",
        "        with StagingGuard(self._graveler, None).writing(repository, branch, path,"
        " owner=owner) as write:\n",
        (
            "tests/interleavings/test_operations.py"
            "::test_a_new_blob_landing_between_the_tombstone_read_and_write_is_never_orphaned",
            "tests/operations/test_delete_locks.py",
        ),
    ),
    Mutation(
        "locks-stage-object-takes-the-write-lock",
        "issue 22 #3: stageObject holds its path's write lock",
        "kvlake/catalog/links.py",
        "        with self._guard.writing(repository, branch, path, owner=owner) as write:\n",
        "        with StagingGuard(self._graveler, None).writing(repository, branch, path,"
        " owner=owner) as write:\n",
        ("tests/operations/test_delete_locks.py",),
    ),
    Mutation(
        "locks-delete-locks-name-their-branch",
        "issue 22 #7: a bulk delete refuses writes on its own branch only",
        "kvlake/operations/locks.py",
        '                if branch is None or lock.branch in ("", branch):\n',
        "                if True:\n",
        (
            "tests/operations/test_delete_locks.py"
            "::test_a_bulk_delete_refuses_no_write_on_another_branch",
            "tests/operations/test_delete_locks.py"
            "::test_a_whole_branch_delete_blocks_its_branch_not_the_repository",
        ),
    ),
    Mutation(
        "locks-branchless-delete-lock-covers-every-branch",
        "issue 22 #7: a delete lock written before locks named a branch still protects all",
        "kvlake/operations/locks.py",
        '                if branch is None or lock.branch in ("", branch):\n',
        "                if branch is None or lock.branch == branch:\n",
        (
            "tests/operations/test_delete_locks.py"
            "::test_a_delete_lock_naming_no_branch_covers_every_branch",
        ),
    ),
    Mutation(
        "locks-cover-deletes",
        "issue 23: a write lock covers deleteObject and deleteObjects of its path",
        "kvlake/catalog/catalog.py",
        "        if self._locks is not None:\n"
        "            self._locks.refuse_locked(repository, path, owner=owner, prefix=prefix)\n",
        "        pass\n",
        (
            "tests/operations/test_delete_locks.py"
            "::test_a_write_lock_covers_deletes_and_resets_of_its_path",
        ),
    ),
    Mutation(
        "locks-cancel-of-a-finished-operation-is-a-conflict",
        "issue 23: cancelling a finished operation answers 409 with its final status",
        "kvlake/operations/bulk_delete.py",
        "            if current.finished:\n                raise ConflictError(\n",
        "            if current.finished:\n                return None\n"
        "            if False:\n                raise ConflictError(\n",
        (
            "tests/operations/test_bulk_delete.py"
            "::test_cancelling_a_finished_operation_is_a_conflict_naming_its_status",
        ),
    ),
    Mutation(
        "locks-operations-belong-to-the-user-as-created",
        "issue 23: a user created again with the same id owns none of the old one's operations",
        "kvlake/operations/records.py",
        "        return (self.creator or self.created_by) == principal\n",
        '        return self.created_by == principal.split("#", 1)[0]\n',
        (
            "tests/operations/test_bulk_delete.py"
            "::test_an_operation_belongs_to_its_creators_principal",
        ),
    ),
    Mutation(
        "locks-users-draw-a-uid-at-creation",
        "issue 23: each creation of a user is another principal",
        "kvlake/auth/store.py",
        "            uid=ids.new_uid(),\n",
        '            uid="",\n',
        ("tests/auth/test_store.py::test_a_user_created_again_is_another_principal",),
    ),
    Mutation(
        "locks-api-owners-are-principals",
        "issue 23: the API owns operations and locks by the caller as created, not its id",
        "kvlake/api/routing.py",
        '        return self.user.principal if self.user is not None else ""\n',
        "        return self.user_id\n",
        (
            "tests/api/test_operations.py"
            "::test_a_user_created_again_owns_none_of_the_old_ones_operations_or_locks",
        ),
    ),
    Mutation(
        "locks-cover-prefix-resets",
        "issue 23: a write lock covers a reset of any prefix above its path",
        "kvlake/operations/locks.py",
        "                if explicit and lock.live(now) and lock.owner != owner:\n",
        "                if False:\n",
        (
            "tests/operations/test_delete_locks.py"
            "::test_a_write_lock_covers_deletes_and_resets_of_its_path",
        ),
    ),
    # -- gateway-multipart: multipart uploads through kvlake (issue 24) --------------------
    Mutation(
        "gateway-multipart-local-entity-too-small",
        "issue 24: every part but the last has at least 5 MiB (EntityTooSmall), on local storage",
        "kvlake/blockstore/local_uploads.py",
        "            if size < MIN_PART_BYTES:\n",
        "            if False:\n",
        (
            "tests/blockstore/test_uploads.py::"
            "test_a_small_part_but_the_last_is_entity_too_small[local]",
        ),
    ),
    Mutation(
        "gateway-multipart-local-part-replaced",
        "issue 24: a part sent again replaces the earlier one (its ETag no longer completes)",
        "kvlake/blockstore/local_uploads.py",
        "                if entry.name.startswith(stale) and entry.name != name:\n",
        "                if False:\n",
        (
            "tests/blockstore/test_uploads.py::"
            "test_a_part_sent_again_replaces_the_earlier_one[local]",
        ),
    ),
    Mutation(
        "gateway-multipart-local-own-key",
        "issue 24: an upload completes only into the key it was started for (NoSuchUpload)",
        "kvlake/blockstore/local_uploads.py",
        "        if recorded != key:  # S3's answer for another key's upload id\n",
        "        if False:\n",
        (
            "tests/blockstore/test_uploads.py::"
            "test_an_upload_completes_only_into_its_own_key[local]",
        ),
    ),
    Mutation(
        "gateway-multipart-local-abort-removes-parts",
        "issue 24: an aborted upload leaves no part files behind",
        "kvlake/blockstore/local_uploads.py",
        "            return  # gone already: aborted or completed\n"
        "        shutil.rmtree(folder, ignore_errors=True)\n",
        "            return  # gone already: aborted or completed\n",
        (
            "tests/blockstore/test_uploads.py::"
            "test_aborted_and_completed_uploads_leave_no_parts_behind[local]",
        ),
    ),
    Mutation(
        "gateway-multipart-etag-shape",
        "issue 24: a completion's ETags are part ETags (InvalidPart), never a path or NUL",
        "kvlake/blockstore/client_uploads.py",
        "            if not PART_ETAG.fullmatch(etag):",
        "            if False:",
        ("tests/blockstore/test_uploads.py::test_a_missing_part_or_a_wrong_etag_is_invalid_part",),
    ),
    Mutation(
        "gateway-multipart-s3-abort-twice",
        "issue 24: aborting an upload already gone is not an error on S3 (NoSuchUpload)",
        "kvlake/blockstore/s3/uploads.py",
        '            if exc.code != "NoSuchUpload":\n',
        "            if True:\n",
        (
            "tests/blockstore/test_uploads.py::"
            "test_aborted_and_completed_uploads_leave_no_parts_behind[s3]",
        ),
    ),
    Mutation(
        "gateway-multipart-part-needs-its-ticket",
        "issue 24: an upload id is only for the key it was created for (NoSuchUpload)",
        "kvlake/catalog/direct.py",
        "        self._verify(repository, branch, path, address)\n"
        "        etag = self._blockstore.upload_part(\n",
        "        etag = self._blockstore.upload_part(\n",
        ("tests/gateway/test_multipart.py::test_an_upload_id_is_only_for_its_own_key",),
    ),
    Mutation(
        "gateway-multipart-s3-codes",
        "issue 24: a refused completion answers S3's code (EntityTooSmall, InvalidPart, ...)",
        "kvlake/gateway/errors.py",
        "    if isinstance(exc, errors.UploadRefusedError):",
        "    if False:",
        ("tests/gateway/test_multipart.py::test_a_small_part_but_the_last_is_entity_too_small",),
    ),
    Mutation(
        "gateway-multipart-copy-range-inside-source",
        "issue 24: a copied part's range lies inside the source (InvalidRange)",
        "kvlake/gateway/multipart.py",
        " or int(match[2]) >= stat.size:",
        ":",
        ("tests/gateway/test_multipart.py::test_a_copied_range_past_the_source_is_invalid_range",),
    ),
    Mutation(
        "gateway-multipart-list-parts-marker",
        "issue 24: ListParts pages from part-number-marker on, each part once",
        "kvlake/gateway/multipart.py",
        "    after = [part for part in parts if part.number > marker]\n",
        "    after = list(parts)\n",
        ("tests/gateway/test_multipart.py::test_list_parts_pages_through_the_parts_sent",),
    ),
    Mutation(
        "gateway-multipart-abandoned-upload-aborted",
        "issue 24: an upload abandoned unlinked is aborted when its address's record is due",
        "kvlake/deletion/worker.py",
        '                    elif record.origin == "unlinked_upload":\n',
        "                    elif False:\n",
        (
            "tests/catalog/test_abandoned_uploads.py::"
            "test_an_abandoned_upload_is_aborted_once_its_address_expired",
        ),
    ),
    # gateway-clients (issue 24): CopyObject's x-amz-copy-source-if-* conditions.
    Mutation(
        "gateway-clients-copy-source-checked",
        "issue 24: the catalog runs a copy's source check on the entry it copies",
        "kvlake/catalog/catalog.py",
        "            check_source(source)  # the very entry copied: no change slips past\n",
        "            pass\n",
        ("tests/gateway/test_boto3.py::test_copy_source_conditionals_copy_or_fail_as_s3[sqlite]",),
    ),
    Mutation(
        "gateway-clients-copy-source-same-entry",
        "issue 24: the source check and the copy see one entry (no change slips between)",
        "kvlake/catalog/catalog.py",
        "            check_source(source)  # the very entry copied: no change slips past\n",
        "            check_source(source)\n"
        "            source = self.stat(repository, source_ref, source_path)\n",
        (
            "tests/catalog/test_copies.py::"
            "test_a_source_check_judges_the_entry_copied_even_if_the_source_changes_after",
        ),
    ),
    Mutation(
        "gateway-clients-copy-source-refused",
        "issue 24: a failed x-amz-copy-source-if-* condition refuses the copy (412)",
        "kvlake/gateway/writing.py",
        "        if failed is not None:\n            raise precondition_failed(failed[1])\n",
        "        pass\n",
        ("tests/gateway/test_boto3.py::test_copy_source_conditionals_copy_or_fail_as_s3[sqlite]",),
    ),
    Mutation(
        "gateway-clients-copy-source-prefix",
        "issue 24: CopyObject judges the x-amz-copy-source-if-* headers, not If-Match & co.",
        "kvlake/gateway/writing.py",
        "failed_condition(call, source, COPY_SOURCE_PREFIX)",
        "failed_condition(call, source)",
        ("tests/gateway/test_boto3.py::test_copy_source_conditionals_copy_or_fail_as_s3[sqlite]",),
    ),
    Mutation(
        "gateway-clients-if-match-outranks",
        "issue 24: If-Match outranks If-Unmodified-Since (RFC 7232 section 6)",
        "kvlake/gateway/reading.py",
        "    if not if_match and unmodified is not None and mtime > unmodified:\n",
        "    if unmodified is not None and mtime > unmodified:\n",
        ("tests/gateway/test_boto3.py::test_copy_source_conditionals_copy_or_fail_as_s3[sqlite]",),
    ),
    Mutation(
        "gateway-clients-if-none-match-outranks",
        "issue 24: If-None-Match outranks If-Modified-Since (RFC 7232 section 6)",
        "kvlake/gateway/reading.py",
        "    if if_none_match:\n        return (304,",
        "    if if_none_match and False:\n        return (304,",
        ("tests/gateway/test_boto3.py::test_copy_source_conditionals_copy_or_fail_as_s3[sqlite]",),
    ),
    # gateway-clients: the body budget the gateway shares with the REST API (issue 23 x 24).
    Mutation(
        "gateway-clients-budget-empty-hold",
        "issues 23/24: an empty body holds no entry another release could remove",
        "kvlake/api/body.py",
        "        if size <= 0:  # nothing to hold; recording a 0 would let two such holds race"
        " a pop\n"
        "            yield\n"
        "            return\n",
        "",
        (
            "tests/api/test_body_budget.py::"
            "test_an_empty_body_released_after_a_full_one_of_its_client_keeps_the_books",
        ),
    ),
    Mutation(
        "upload-budget-release-wakes-waiters",
        "issue 28: a body budget's release wakes the holds waiting for it (they take a share"
        " that fits without the condition's lock)",
        "kvlake/api/body.py",
        "            if self._waiting:\n",
        "            if False:\n",
        (
            "tests/api/test_body_budget.py::"
            "test_a_hold_that_waits_for_budget_gets_it_when_a_holder_releases",
        ),
    ),
    Mutation(
        "gateway-clients-budget-client",
        "issues 23/24: a gateway body counts against its client address's share",
        "kvlake/gateway/app.py",
        "            async with limits.budget.hold(share, client=client):\n",
        "            async with limits.budget.hold(share):\n",
        ("tests/gateway/test_limits.py",),
    ),
    # presign2: a blob replaced through its presigned URL after the link is refused on read
    Mutation(
        "presign2-link-records-etag",
        "the link records the blob's ETag that reads check",
        "kvlake/catalog/direct.py",
        "            blob_etag=stored.etag,",
        '            blob_etag="",',
        (
            "tests/api/test_s3_lake.py::test_a_blob_replaced_throug"
            "h_its_presigned_url_after_the_link_is_refused_on_read",
        ),
    ),
    Mutation(
        "presign2-read-if-match",
        "reads of a linked blob send its ETag as IfMatch",
        "kvlake/blockstore/s3/store.py",
        '            request["IfMatch"] = f\'"{if_match}"\'',
        "            pass",
        (
            "tests/api/test_s3_lake.py::test_a_blob_replaced_throug"
            "h_its_presigned_url_after_the_link_is_refused_on_read",
        ),
    ),
    Mutation(
        "presign2-shallow-copy-etag",
        "a shallow copy keeps the source's blob ETag",
        "kvlake/catalog/catalog.py",
        "            blob_etag=source.blob_etag,",
        '            blob_etag="",',
        (
            "tests/api/test_s3_lake.py::test_a_blob_replaced_throug"
            "h_its_presigned_url_after_the_link_is_refused_on_read",
        ),
    ),
    # -- a deep copy checks a linked source's recorded ETag (issue 23, presigned PUT) -------
    Mutation(
        "presign2-deep-copy-if-match",
        "issue 23: a deep copy of a linked blob replaced through its presigned URL is refused",
        "kvlake/catalog/catalog.py",
        "                repository.storage_namespace, source.address, address,"
        " if_match=source.blob_etag\n",
        "                repository.storage_namespace, source.address, address\n",
        (
            "tests/api/test_s3_lake.py::"
            "test_a_blob_replaced_through_its_presigned_url_after_the_link_is_refused_on_read",
        ),
    ),
    Mutation(
        "presign2-s3-copy-compares-etag",
        "issue 23: the S3 copy refuses a source whose ETag is not the recorded one",
        "kvlake/blockstore/s3/store.py",
        "        if if_match and head.etag != if_match:",
        "        if False:",
        (
            "tests/api/test_s3_lake.py::"
            "test_a_blob_replaced_through_its_presigned_url_after_the_link_is_refused_on_read",
        ),
    ),
    # -- lakeFS's merge and diff semantics (issue 32) ---------------------------------------
    Mutation(
        "compat-merge-refuses-only-a-source-with-nothing-new",
        "issue 32: a merge is refused as 'no changes' only when the source's tree is the base's",
        "kvlake/graveler/history/merge.py",
        "    return bool(base.parents) and source.metarange_id == base.metarange_id\n",
        "    return False\n",
        (
            "tests/graveler/test_merge.py::"
            "test_a_source_with_nothing_new_since_the_base_is_refused_unless_allowed",
        ),
    ),
    Mutation(
        "compat-merge-first-commit-has-no-tree",
        "issue 32: lakeFS's first commit has no metarange, so a source never equals that base",
        "kvlake/graveler/history/merge.py",
        "    return bool(base.parents) and source.metarange_id == base.metarange_id\n",
        "    return source.metarange_id == base.metarange_id\n",
        (
            "tests/graveler/test_merge.py::"
            "test_merging_an_older_commit_whose_tree_is_the_destinations_records_a_merge",
        ),
    ),
    Mutation(
        "compat-merge-ignores-the-destinations-tree",
        "issue 32: a source with changes is merged even when the result is the destination's",
        "kvlake/graveler/history/merge.py",
        "                strategy=strategy,\n            )\n            parents =",
        "                strategy=strategy,\n            )\n"
        "            if metarange_id == head.metarange_id:\n"
        "                raise NoChangesError('no changes')\n"
        "            parents =",
        (
            "tests/graveler/test_merge.py::"
            "test_merging_an_older_commit_whose_tree_is_the_destinations_records_a_merge",
        ),
    ),
    Mutation(
        "compat-committed-removal-has-its-old-size",
        "issue 32: a removal between commits reports the size the object had, as lakeFS does",
        "kvlake/graveler/history/diff.py",
        "        size = 0 if removed_size is None else removed_size(difference.key)\n",
        "        size = 0\n",
        ("tests/graveler/test_diff.py::test_diff_entries_say_type_size_and_value",),
    ),
    Mutation(
        "compat-staged-removal-has-size-0",
        "issue 32: a staged removal reports size_bytes 0 (lakeFS's tombstone has no size)",
        "kvlake/api/routes/diffs.py",
        '        size = entry.size if entry.path_type == "object" else None\n',
        "        size = entry.size if entry.value is not None else None\n",
        (
            "tests/api/test_refs.py::"
            "test_wrapper_delete_object_changes_report_removed_entries_with_size_0",
        ),
    ),
    # harden: issue 23, presigned PUT after the link (presigned GETs, the Spark reader, expiry)
    Mutation(
        "harden-presign-read-checks-etag",
        "no presigned GET URL for a linked blob replaced since the link",
        "kvlake/blockstore/store.py",
        "        if if_match and self._head(normalised, key).etag != if_match:\n",
        "        if False:\n",
        (
            "tests/api/test_s3_lake.py::test_a_blob_replaced_throug"
            "h_its_presigned_url_after_the_link_is_refused_on_read",
        ),
    ),
    Mutation(
        "harden-presign-read-passes-etag",
        "getObject/statObject with presign pass the entry's recorded ETag",
        "kvlake/api/routes/objects.py",
        "        namespace, key, expires=PRESIGN_SECONDS, if_match=stat.blob_etag\n",
        "        namespace, key, expires=PRESIGN_SECONDS\n",
        (
            "tests/api/test_s3_lake.py::test_a_blob_replaced_throug"
            "h_its_presigned_url_after_the_link_is_refused_on_read",
        ),
    ),
    Mutation(
        "harden-dataset-plan-carries-etag",
        "a planned dataset file carries its entry's blob ETag to the tasks",
        "kvlake/pipelines/datasets.py",
        "DataFile(path, namespace, blob, stat.size, values, stat.blob_etag)",
        "DataFile(path, namespace, blob, stat.size, values)",
        (
            "tests/pipelines/test_datasets.py::test_a_linked_"
            "blob_replaced_after_the_link_fails_its_task[s3]",
        ),
    ),
    Mutation(
        "harden-blob-file-reads-if-match",
        "a task's ranged reads send the planned ETag",
        "kvlake/pipelines/blobfile.py",
        "start=self._position, end=end, if_match=self._if_match",
        "start=self._position, end=end",
        (
            "tests/pipelines/test_datasets.py::test_a_linked_"
            "blob_replaced_after_the_link_fails_its_task[s3]",
        ),
    ),
    Mutation(
        "harden-presign-upload-expiry",
        "getPhysicalAddress's PUT URL lives only the configured (short) expiry",
        "kvlake/api/routes/staging.py",
        "        expires = call.services.settings.server.presign_upload_expiry\n",
        "        expires = 15 * 60\n",
        (
            "tests/api/test_s3_lake.py::test_a_blob_replaced_throug"
            "h_its_presigned_url_after_the_link_is_refused_on_read",
        ),
    ),
    # harden: issue 23, JSON bodies are read only after authorization where they can be
    Mutation(
        "harden-json-authorized-before-body",
        "a JSON operation whose permissions need no body is authorized before it is read",
        "kvlake/api/routing.py",
        "        if not operation.public and not operation.body_permissions:\n",
        "        if stream and not operation.public:\n",
        (
            "tests/api/test_limits.py"
            "::test_a_json_body_without_permission_is_refused_before_it_is_read",
        ),
    ),
    Mutation(
        "harden-body-permissions-declared",
        "an operation whose permissions read the body declares it (else a 500 before it)",
        "kvlake/api/routes/repositories.py",
        "        body_permissions=True,\n",
        "",
        (
            "tests/api/test_routing.py"
            "::test_operations_authorized_before_their_body_need_nothing_from_it",
        ),
    ),
    # harden: issue 23, the connection guards on uvicorn's h11 protocol too
    Mutation(
        "harden-h11-guards",
        "h11 connections get the head deadline and the per-address cap",
        "kvlake/api/protocols.py",
        "class NoDelayH11Protocol(GuardedConnection, H11Protocol):",
        "class NoDelayH11Protocol(H11Protocol):",
        (
            "tests/api/test_limits.py::test_a_connection_must_send_its_head_in_time[h11-local]",
            "tests/api/test_limits.py"
            "::test_one_address_holds_at_most_its_share_of_connections[h11-local]",
        ),
    ),
    Mutation(
        "harden-server-http-setting",
        "KVLAKE_SERVER_HTTP chooses the protocol the workers serve",
        "kvlake/api/server.py",
        "    protocol = protocol_path(settings.server.http)",
        "    protocol = protocol_path()",
        ("tests/api/test_limits.py::test_a_connection_must_send_its_head_in_time[h11-local]",),
    ),
    # -- issue 22, round 2 (deletion safety) ------------------------------------------------
    Mutation(
        "safety2-shared-marks-hold-their-time",
        "issue 22 (e): a bulk delete's shared marks hold the real time (an earlier GC run keeps)",
        "kvlake/deletion/log.py",
        "            ((keys.shared_key(instance_uid, address), marker)",
        '            ((keys.shared_key(instance_uid, address), b"")',
        (
            "tests/deletion/test_gc.py::"
            "test_a_bulk_delete_marking_after_a_run_started_keeps_the_candidate",
        ),
    ),
    Mutation(
        "safety2-in-use-check-reads-imports-canonically",
        "issue 22 (d): an old import naming an own blob by an odd spelling keeps it in use",
        "kvlake/deletion/staged_refs.py",
        "        if ref.address or not ref.imported:\n",
        "        if True:\n",
        (
            "tests/deletion/test_odd_imports.py::"
            "test_an_old_import_at_the_same_path_keeps_an_overwritten_blob",
            "tests/deletion/test_odd_imports.py::"
            "test_an_old_import_staged_anywhere_keeps_a_gc_candidate",
            "tests/deletion/test_odd_imports.py::test_a_comm"
            "it_holding_an_old_import_of_the_blob_keeps_it",
        ),
    ),
    Mutation(
        "safety2-upload-logs-its-intent-first",
        "issue 22 (f): an upload logs its blob's intent before storing it (a crash orphans none)",
        "kvlake/catalog/uploads.py",
        "        intent = self._log_intent(repository, address, token, key, now)\n",
        "        intent = None\n",
        (
            "tests/deletion/test_sigkill.py::"
            "test_an_upload_killed_between_its_blob_and_its_entry_orphans_nothing",
            "tests/deletion/test_upload_intents.py::"
            "test_a_put_that_stored_its_blob_but_failed_leaves_it_to_the_log",
        ),
    ),
    Mutation(
        "safety2-upload-refused-once-its-intent-was-taken",
        "issue 22 (f): an upload whose intent a worker took (body past 24 h) stages nothing",
        "kvlake/catalog/uploads.py",
        "        if not withdrawn:\n",
        "        if False:\n",
        (
            "tests/deletion/test_upload_intents.py::"
            "test_an_upload_outliving_its_intent_is_refused_and_leaves_nothing",
        ),
    ),
    Mutation(
        "upload-intent-withdrawn-where-its-bytes-changed",
        "issue 28: an upload's one-round-trip withdrawal still finds a record rewritten under"
        " its key (else the upload is refused and its blob deleted)",
        "kvlake/deletion/log.py",
        "        return self.withdraw(record)\n",
        "        return False\n",
        (
            "tests/deletion/test_upload_intents.py::"
            "test_withdrawing_an_appended_intent_finds_it_even_where_its_bytes_changed",
        ),
    ),
    Mutation(
        "kv-sqlite-grouped-batch-all-or-nothing",
        "issue 28: a small batch committed in a group is undone whole when one row is refused",
        "kvlake/kv/sqlite.py",
        '            cursor.execute("ROLLBACK TO batch")\n',
        "            pass\n",
        (
            "tests/kv/test_group_commit.py::"
            "test_a_statement_sqlite_refuses_fails_only_its_own_caller[ABORT]",
        ),
    ),
    Mutation(
        "kv-sqlite-small-batches-join-the-group",
        "issue 28: an upload's one-row intent shares its group's commit (and fsync)",
        "kvlake/kv/sqlite.py",
        "        if len(rows) <= GROUPED_BATCH_ROWS:\n",
        "        if False:\n",
        (
            "tests/kv/test_group_commit.py::"
            "test_concurrent_writes_commit_as_one_group_each_with_its_own_outcome",
        ),
    ),
    Mutation(
        "safety2-import-refuses-locked-destinations",
        "issue 22 (b): an import into a destination a bulk delete or a write lock holds is refused",
        "kvlake/catalog/imports.py",
        "        self._refuse_locked(repository, branch, sources, committer)\n",
        "        pass\n",
        (
            "tests/catalog/test_import_locks.py::test_an_i"
            "mport_over_a_running_bulk_delete_is_refused",
            "tests/catalog/test_import_locks.py::test_another_owne"
            "rs_write_lock_under_a_destination_refuses_the_import",
        ),
    ),
    Mutation(
        "safety2-import-rechecks-locks-before-publishing",
        "issue 22 (b): an import re-checks the locks right before it publishes (both engines)",
        "kvlake/catalog/imports.py",
        "            precondition=unlocked,\n",
        "            precondition=None,\n",
        (
            "tests/catalog/test_import_locks.py::test_a_bulk_delete_"
            "started_while_the_sources_are_listed_stops_the_import",
            "tests/catalog/test_import_locks.py::test_a_write_lock"
            "_taken_while_the_sources_are_listed_stops_the_import",
        ),
    ),
    Mutation(
        "safety2-import-sees-bulk-deletes-inside-its-prefix",
        "issue 22 (b): a bulk delete of a prefix inside an import's destination refuses it",
        "kvlake/operations/locks.py",
        "covers = path.startswith(lock.path) or (whole and lock.path.startswith(path))",
        "covers = path.startswith(lock.path)",
        (
            "tests/catalog/test_import_locks.py::test_an_i"
            "mport_over_a_running_bulk_delete_is_refused",
        ),
    ),
    # -- issue 33: costs grow with the change, not with untouched data --------------------
    Mutation(
        "scale-gc-staged-set-reused",
        "issue 33 item 1: a GC run reads the staged entries once, not once per batch",
        "kvlake/deletion/staged_refs.py",
        "            if staged is None or not staged.built <= now < staged.built"
        " + STAGED_SET_REUSE:",
        "            if True:",
        (
            "tests/deletion/test_scale.py::"
            "test_gc_batches_read_the_staged_entries_once_per_run_not_once_per_batch",
        ),
    ),
    Mutation(
        "scale-gc-staged-set-expires",
        "invariant 4: a GC run's staged-address set is read again once it is too old",
        "kvlake/deletion/staged_refs.py",
        "            if staged is None or not staged.built <= now < staged.built"
        " + STAGED_SET_REUSE:",
        "            if staged is None:",
        (
            "tests/deletion/test_scale.py::"
            "test_a_gc_run_sees_entries_staged_since_its_set_once_the_set_is_reused_no_longer",
        ),
    ),
    Mutation(
        "scale-path-checked-across-tokens",
        "issue 33 item 2: a path is checked in every live token in one round trip",
        "kvlake/deletion/staged_refs.py",
        "        staged = self._references.staged_values_across(by_token, paths)"
        " if by_token else {}",
        "        staged = {t: self._references.staged_values(t, paths) for t in by_token}",
        (
            "tests/deletion/test_scale.py::"
            "test_a_path_is_checked_in_every_live_token_in"
            "_round_trips_that_do_not_grow_with_branches",
        ),
    ),
    Mutation(
        "scale-gc-scans-only-tokens-with-entries",
        "issue 33 item 2: a GC batch scans no live token whose staging partition is empty",
        "kvlake/graveler/references.py",
        "        return LiveTokens(tokens, read.sealed)\n",
        "        return self.live_tokens(repository)\n",
        (
            "tests/deletion/test_scale.py::"
            "test_a_gc_batch_scans_no_live_token_whose_staging_is_empty",
        ),
    ),
    Mutation(
        "scale-gc-scans-the-tokens-with-entries",
        "invariant 4: a GC candidate staged on one branch among many is in use",
        "kvlake/graveler/references.py",
        "        return LiveTokens(tokens, read.sealed)\n",
        "        return LiveTokens([], read.sealed)\n",
        (
            "tests/deletion/test_scale.py::"
            "test_a_gc_batch_scans_no_live_token_whose_staging_is_empty",
            "tests/deletion/test_sealing_index.py::"
            "test_a_commit_sealing_between_the_index_read_and_the_lookups_keeps_the_blob",
        ),
    ),
    Mutation(
        "scale-seal-indexes-its-token-before-the-swap",
        "issue 33 item 2: a seal indexes its token before its swap, so the in-use check that"
        " reads the sealing index, not every branch, still waits on it",
        "kvlake/graveler/history/commits.py",
        "                repository, branch_name, branch.staging_token, (branch.staging_token,)\n",
        "                repository, branch_name, branch.staging_token, ()\n",
        ("tests/deletion/test_sealing_index.py::test_a_record_whose_token_a_commit_sealed_waits",),
    ),
    Mutation(
        "scale-sealing-index-confirmed-by-the-branches",
        "issue 33 item 2: an index entry counts only as its branch's record reads it (a seal"
        " that crashed before its swap leaves no wait behind)",
        "kvlake/graveler/refs/sealing.py",
        "            read.sealed.update(branch.sealed_tokens)\n",
        "            read.sealed.update(entries)\n",
        ("tests/deletion/test_sealing_index.py::test_stale_entries_are_ignored_and_removed",),
    ),
    Mutation(
        "scale-sealing-index-built-for-older-stores",
        "issue 33 item 2: an instance written before the sealing index has it built from its"
        " branches' sealed tokens",
        "kvlake/graveler/refs/sealing.py",
        "                    entries.extend(\n",
        "                    [].extend(\n",
        (
            "tests/deletion/test_sealing_index.py::"
            "test_a_store_written_before_the_index_has_it_built_from_the_branches",
        ),
    ),
    Mutation(
        "scale-sealing-index-keeps-a-token-published-above",
        "invariant 4: a token indexed before a publish above the staging names it keeps its"
        " entry while the branch still names the anchor (else it is sealed unindexed)",
        "kvlake/graveler/refs/sealing.py",
        "            if token not in named and anchor not in named:\n",
        "            if token not in named:\n",
        (
            "tests/deletion/test_live_tokens.py::"
            "test_a_check_between_a_token_published_above_and_its_swap_keeps_its_index_entry",
        ),
    ),
    Mutation(
        "scale-in-use-reads-no-branch-per-check",
        "issue 33 item 2: one record's check reads no row per branch whose staging is empty",
        "kvlake/graveler/references.py",
        "        return LiveTokens(tokens, read.sealed)\n",
        "        return self.live_tokens(repository)\n",
        (
            "tests/deletion/test_scale.py::"
            "test_one_records_check_reads_no_row_per_branch_whose_staging_is_empty",
        ),
    ),
    Mutation(
        "live-tokens-consumed-left-out",
        "issue 33 item 2: a token a commit consumed and no branch seals is not looked in (its"
        " partition still holds what the commit published: GC must delete such blobs)",
        "kvlake/graveler/references.py",
        "        dead = {token for token in consumed if token not in read.sealed}\n",
        "        dead = set()\n",
        (
            "tests/deletion/test_live_tokens.py::"
            "test_a_gc_candidate_staged_only_in_a_consumed_token_is_deleted",
        ),
    ),
    Mutation(
        "live-tokens-consumed-still-sealed-looked-in",
        "invariant 4: a consumed token still sealed (its commit has not published) is looked in",
        "kvlake/graveler/references.py",
        "        dead = {token for token in consumed if token not in read.sealed}\n",
        "        dead = set(consumed)\n",
        ("tests/deletion/test_live_tokens.py::test_a_consumed_token_still_sealed_is_looked_in",),
    ),
    Mutation(
        "live-tokens-queued-left-out",
        "issue 33 item 2: a token queued for dropping that its branch no longer names is not"
        " looked in",
        "kvlake/graveler/references.py",
        "                dead.add(token)\n",
        "                pass\n",
        (
            "tests/deletion/test_live_tokens.py::"
            "test_a_gc_candidate_in_a_token_a_reset_dropped_is_deleted",
        ),
    ),
    Mutation(
        "live-tokens-queued-still-named-looked-in",
        "invariant 4: a token queued for dropping that its branch still names (a reset or"
        " publish before its swap) is looked in",
        "kvlake/graveler/references.py",
        "            if branch is None or token not in branch.tokens():\n",
        "            if True:\n",
        (
            "tests/deletion/test_live_tokens.py::"
            "test_a_queued_token_its_branch_still_names_is_looked_in",
        ),
    ),
    Mutation(
        "live-tokens-consumed-read-before-the-branches",
        "invariant 4: the consumed records are read before the branches (read after, a token"
        " sealed and consumed meanwhile counts as gone under its commit in progress)",
        "kvlake/graveler/references.py",
        "        consumed = set(self._refs.consumed_by(repository, listed))\n"
        "        queued = self._queued_branches([token for token in listed if token not in"
        " consumed])\n"
        "        read = self._refs.sealed_tokens(repository, also=set(queued.values()))\n",
        "        read = self._refs.sealed_tokens(repository)\n"
        "        consumed = set(self._refs.consumed_by(repository, listed))\n"
        "        queued = self._queued_branches([token for token in listed if token not in"
        " consumed])\n"
        "        again = self._refs.sealed_tokens(repository, also=set(queued.values()))\n"
        "        read.branches.update(again.branches)\n",
        (
            "tests/deletion/test_live_tokens.py::"
            "test_a_commit_that_seals_and_consumes_while_the_check_reads_keeps_the_blob",
        ),
    ),
    Mutation(
        "live-tokens-listed-again-after-the-branches",
        "invariant 4: the non-empty partitions are listed again after the branch read, so a"
        " live token that got its first entry meanwhile is looked in",
        "kvlake/graveler/references.py",
        "        tokens = [token for token in self.tokens_with_entries(uid) if token not in"
        " dead]\n",
        "        tokens = [token for token in listed if token not in dead]\n",
        (
            "tests/deletion/test_live_tokens.py::"
            "test_an_entry_staged_in_an_empty_token_while_the_check_reads_is_found",
        ),
    ),
    Mutation(
        "scale-sweep-instance-names-written",
        "invariant 2: a creation names its uid, so a sweep slice of staging partitions finds"
        " the live owner of each (issue 33 item 6)",
        "kvlake/graveler/lifecycle/liverepos.py",
        "        self._store.set(keys.INSTANCES, instance_uid.encode(), name.encode())\n",
        "",
        (
            "tests/graveler/test_scale.py::"
            "test_a_live_repositorys_staging_is_found_live_by_a_slice_that_misses_its_instance",
        ),
    ),
    Mutation(
        "scale-sweep-instance-names-built",
        "invariant 2: a store older than the uid index gets it built before a sweep judges",
        "kvlake/graveler/lifecycle/liverepos.py",
        "            self._build_names()\n",
        "            pass\n",
        (
            "tests/graveler/test_scale.py::"
            "test_a_live_repositorys_staging_is_found_live_by_a_slice_that_misses_its_instance",
        ),
    ),
    Mutation(
        "scale-sweep-reads-its-slices-instances",
        "issue 33 item 6: a sweep reads the repositories of its slice, not every record",
        "kvlake/graveler/lifecycle/orphans.py",
        "            live, cleaning = self._instances(batch)\n",
        "            live, cleaning = self._instances(list(self._store.partitions()))\n",
        (
            "tests/graveler/test_scale.py::"
            "test_an_orphan_sweep_reads_the_repositories_of_its_slice_not_every_repository",
        ),
    ),
    Mutation(
        "scale-cleaner-forgets-instance-names",
        "a cleaned instance leaves no uid name behind, even after a crash",
        "kvlake/graveler/lifecycle/cleaner.py",
        "                self._store.delete(keys.INSTANCES, entry.instance_uid.encode())\n",
        "",
        (
            "tests/graveler/test_crashes.py::"
            "test_crash_during_cleaner_pass_is_finished_by_the_next_pass",
        ),
    ),
    Mutation(
        "scale-token-drop-one-branch-scan",
        "issue 33 item 3: a cleaner pass scans the branches once, not once per dropped token",
        "kvlake/deletion/hooks.py",
        "        claim = self._graveler.references.consumers(repository, [token]).get(token)\n",
        "        self._graveler.references.token_states(repository, [token])\n"
        "        claim = self._graveler.references.consumers(repository, [token]).get(token)\n",
        (
            "tests/deletion/test_scale.py::"
            "test_a_cleaner_pass_reads_the_branches_its_tokens_were_queued_from_not_every_branch",
        ),
    ),
    Mutation(
        "scale-cleaner-keeps-referenced-tokens",
        "invariant 2: the cleaner never drops a token a branch names (the hook no longer"
        " re-checks)",
        "kvlake/graveler/lifecycle/cleaner.py",
        "                    if entry.token not in referenced:\n",
        "                    if True:\n",
        (
            "tests/graveler/test_cleaner_hooks.py::"
            "test_a_token_queued_while_a_branch_still_names_it_is_kept_and_nothing_logged",
        ),
    ),
    Mutation(
        "scale-repository-prefix-seek",
        "issue 33 item 4: a repository prefix seeks to its first name",
        "kvlake/graveler/lifecycle/liverepos.py",
        "        first = keys.live_repository_prefix(prefix)\n",
        "        first = keys.live_repository_prefix(prefix[:0])\n",
        ("tests/graveler/test_scale.py::test_a_repository_prefix_reads_only_the_names_it_lists",),
    ),
    Mutation(
        "scale-ref-prefix-seek",
        "issue 33 item 4: a branch or tag prefix seeks to its first name",
        "kvlake/graveler/refs/store.py",
        "        first = prefix + name_prefix.encode()\n",
        "        first = prefix\n",
        (
            "tests/graveler/test_scale.py::test_a_branch_prefix_reads_only_the_names_it_lists",
            "tests/graveler/test_scale.py::test_a_tag_prefix_reads_only_the_names_it_lists",
        ),
    ),
    Mutation(
        "scale-ref-walk-lineages",
        "issue 33 item 7: a first-parent walk reads lineages, which a long history keeps cached",
        "kvlake/graveler/refs/refexpr.py",
        "            lambda i: self._refs.get_lineage(repository, i), commit_id,"
        " lineage_of(commit), count\n",
        "            lambda i: lineage_of(self._refs.get_commit(repository, i)), commit_id,"
        " lineage_of(commit), count\n",
        (
            "tests/graveler/test_scale.py::"
            "test_walking_a_history_longer_than_the_commit_cache_again_reads_no_commit",
        ),
    ),
    Mutation(
        "scale-lineage-cache",
        "issue 33 item 7: walks keep the lineages they read",
        "kvlake/graveler/refs/store.py",
        "            found[identifier] = lineage = lineage_of(commit)\n"
        "            self._lineages.put((uid, identifier), lineage)\n",
        "            found[identifier] = lineage = lineage_of(commit)\n",
        (
            "tests/graveler/test_scale.py::"
            "test_walking_a_history_longer_than_the_commit_cache_again_reads_no_commit",
            "tests/graveler/test_scale.py::"
            "test_a_merge_base_of_long_forks_found_again_reads_no_commit",
        ),
    ),
    Mutation(
        "walks-restore-stamps-skips",
        "issue 33 item 7: commits written by add_commits (a restore) get their walk fields",
        "kvlake/graveler/refs/store.py",
        "                    record = stamp(read, commit)\n",
        "                    record = unstamped(commit)\n",
        (
            "tests/graveler/test_walks.py::"
            "test_a_restored_history_walks_by_skips_as_its_source_does",
        ),
    ),
    Mutation(
        "walks-restore-in-generation-order",
        "issue 33 item 7: add_commits stamps parents before children (generation order)",
        "kvlake/graveler/refs/store.py",
        "        given = sorted(commits, key=lambda item: item[1].generation)\n",
        "        given = list(commits)\n",
        (
            "tests/graveler/test_walks.py::"
            "test_commits_restored_before_their_parents_are_stamped_in_generation_order",
        ),
    ),
    Mutation(
        "walks-restore-reads-its-own-parents",
        "issue 33 item 7: add_commits stamps from the parents of the same call, unwritten yet",
        "kvlake/graveler/refs/store.py",
        "                lineages[identifier] = lineage_of(record)\n",
        "",
        (
            "tests/graveler/test_walks.py::"
            "test_a_restored_history_walks_by_skips_as_its_source_does",
        ),
    ),
    Mutation(
        "walks-restore-parent-nowhere-unstamped",
        "issue 33 item 7: a commit whose first parent is nowhere is stored without walk fields",
        "kvlake/graveler/refs/store.py",
        "                except CommitNotFoundError:",
        "                except KeyError:",
        (
            "tests/graveler/test_walks.py::"
            "test_a_commit_whose_parent_is_nowhere_is_stored_without_walk_fields",
        ),
    ),
    Mutation(
        "compat-merge-force-allows-empty",
        "issue 32: the merge body's force records a merge with no changes, as lakeFS's does",
        "kvlake/api/routes/history.py",
        "        allow_empty=bool(request.allow_empty or request.force),\n",
        "        allow_empty=bool(request.allow_empty),\n",
        ("tests/api/test_refs.py::test_merge_with_force_records_a_merge_that_brings_no_changes",),
    ),
    Mutation(
        "compat-param-choices",
        "issue 32: a parameter with lakeFS's enum refuses other values (bad input changes nothing)",
        "kvlake/api/params.py",
        "        if param.choices and raw not in param.choices:\n",
        "        if False:\n",
        (
            "tests/api/test_params.py::"
            "test_a_choice_takes_only_its_values_and_the_document_lists_them",
        ),
    ),
    Mutation(
        "safety2-range-batch-staged-reads-check-their-snapshot",
        "issue 22 (a): a range batch's reads of staging are re-read when their token dropped",
        "kvlake/operations/snapshots.py",
        "        if snapshot_holds(context, repository, branch, snapshot, taken):\n",
        "        if True:\n",
        (
            "tests/operations/test_stale_listings.py::test_a_token_dropped_unde"
            "r_a_range_batch_read_of_staging_is_read_again[local-enumeration]",
            "tests/operations/test_stale_listings.py::test_a_token_dropped_un"
            "der_a_range_batch_read_of_staging_is_read_again[local-planning]",
        ),
    ),
    Mutation(
        "safety2-range-batch-counts-what-the-drop-committed",
        "issue 22 (a): entries the drop's commit took out of staging count as found staged",
        "kvlake/operations/bulk_delete_driver.py",
        "        for key, value in since.items():\n            found.setdefault(key, value)\n",
        "",
        (
            "tests/operations/test_stale_listings.py::test_a_token_dropped_unde"
            "r_a_range_batch_read_of_staging_is_read_again[local-enumeration]",
        ),
    ),
    Mutation(
        "safety2-interleaved-commit-tombstones-follow-the-seal",
        "invariant 2 (issue 22 c): a batch's tombstones follow a commit's seal, at every step",
        "kvlake/graveler/staging/writer.py",
        "            current = self._refs.load_branch(repository, branch)[0]\n"
        "            if current.staging_token == token:\n"
        "                return\n",
        "            return\n",
        (
            "tests/interleavings/test_operations.py::test_a_commit_or_merge_at_e"
            "very_step_of_a_bulk_delete_loses_and_wedges_nothing[local-commit]",
        ),
    ),
    Mutation(
        "tombstone-batch-raced-keys-rewritten",
        "invariant 4: a key a writer replaced between a tombstone batch's read and its swaps"
        " goes through the single-write path (announced, then deleted)",
        "kvlake/graveler/staging/writer.py",
        "            self._swap(repository, branch, token, key, None, TOMBSTONE, None, [])\n",
        "            pass\n",
        ("tests/graveler/test_tombstone_batches.py",),
    ),
    Mutation(
        "tombstone-batch-span-read-own-keys",
        "invariant 4 (issue 26): a tombstone batch read as one range takes only its own keys",
        "kvlake/graveler/staging/writer.py",
        "                    if key in wanted:\n                        found[key] = raw\n",
        "                    found[key] = raw\n",
        (
            "tests/graveler/test_tombstone_batches.py::"
            "test_a_batch_read_as_one_range_tombstones_only_its_own_keys",
        ),
    ),
    Mutation(
        "tombstone-batch-span-read-rest-looked-up",
        "invariant 4 (issue 26): keys past a range read's budget are read, not taken for absent",
        "kvlake/graveler/staging/writer.py",
        "                    found.update(self._store.get_many(partition, rest))\n",
        "                    pass\n",
        (
            "tests/graveler/test_tombstone_batches.py::"
            "test_a_batch_whose_span_holds_mostly_other_keys_reads_the_rest_one_by_one",
        ),
    ),
    Mutation(
        "kv-swap-many-sqlite-judges-the-chunk",
        "KV contract: a SQLite swap_many chunk with any changed key is swapped a key at a time",
        "kvlake/kv/sqlite.py",
        "                if cursor.rowcount != len(rows):\n",
        "                if False:\n",
        (
            "tests/kv/test_store_contract.py::test_swap_many_writes_the_unchanged_keys_and_names_the_others",
        ),
    ),
    Mutation(
        "kv-chunks-slice-whole-lists",
        "KV contract: a batch helper given a list writes every item of it",
        "kvlake/kv/store.py",
        "            yield items[start : start + size]\n",
        "            yield items[start : start + size - 1]\n",
        ("tests/kv/test_store_contract.py::test_batch_helpers_given_lists_go_over_chunks",),
    ),
    Mutation(
        "kv-swap-many-sqlite-reports-missed",
        "KV contract: swap_many names the keys whose value changed (SQLite)",
        "kvlake/kv/sqlite.py",
        "                            if cursor.rowcount != 1:\n"
        "                                missed.append(key)\n",
        "                            pass\n",
        (
            "tests/kv/test_store_contract.py::test_swap_many_writes_the_unchanged_keys_and_names_the_others",
        ),
    ),
    Mutation(
        "deletion-batch-record-read-per-member",
        "invariant 4 (issue 26): every blob of a batch record is a record of its own to workers",
        "kvlake/deletion/log.py",
        "    return [DueRecord(key, member) for member in record.expand()]\n",
        "    return [DueRecord(key, record)]\n",
        (
            "tests/deletion/test_batch_records.py::"
            "test_a_batch_of_tombstones_logs_one_row_read_as_a_record_per_blob",
        ),
    ),
    Mutation(
        "deletion-batch-member-ids-distinct",
        "invariant 4 (issue 26): a batch member's outcome is its own (a failed delete retried)",
        "kvlake/deletion/keys.py",
        '    return f"{batch_id}.{index}"\n',
        "    return batch_id\n",
        (
            "tests/deletion/test_batch_records.py::"
            "test_a_batch_member_whose_delete_fails_is_retried_alone",
        ),
    ),
    Mutation(
        "kv-get-many-postgres-probes-the-partition",
        "KV contract: get_many reads the keys of its own partition only (PostgreSQL)",
        "kvlake/kv/postgres.py",
        " WHERE partition = %s AND key = u.k LIMIT 1) AS f'\n)",
        " WHERE %s::bytea IS NOT NULL AND key = u.k LIMIT 1) AS f'\n)",
        (
            "tests/kv/test_store_contract.py::"
            "test_get_many_returns_the_existing_keys_across_chunks_and_leaves_out_missing_ones",
        ),
    ),
    Mutation(
        "kv-swap-many-postgres-compares",
        "KV contract: swap_many writes only keys still holding the expected value (PostgreSQL)",
        "kvlake/kv/postgres.py",
        '" WHERE partition = %s AND key = u.k AND value = u.e LIMIT 1) AS f"',
        '" WHERE partition = %s AND key = u.k LIMIT 1) AS f"',
        (
            "tests/kv/test_store_contract.py::test_swap_many_writes_the_unchanged_keys_and_names_the_others",
        ),
    ),
    Mutation(
        "safety2-interleaved-commit-tombstoned-blobs-logged",
        "invariant 4 (issue 22 c): a batch logs the staged blobs it tombstones, a commit racing",
        "kvlake/graveler/staging/writer.py",
        "            self.hooks.before_unstage(repository, token, entries, None)\n"
        "        swaps = [(key, raw, TOMBSTONE) for key, raw in live]\n",
        "            pass\n        swaps = [(key, raw, TOMBSTONE) for key, raw in live]\n",
        (
            "tests/interleavings/test_operations.py::test_a_commit_or_merge_at_e"
            "very_step_of_a_bulk_delete_loses_and_wedges_nothing[local-commit]",
        ),
    ),
    Mutation(
        "gateway-uploads-forgotten-when-ended",
        "issue 24: a completed or aborted multipart upload is no longer listed",
        "kvlake/catalog/direct.py",
        "        self._forget_upload(repository, branch, path, address)\n        return stat\n",
        "        return stat\n",
        ("tests/gateway/test_uploads.py::test_completed_and_aborted_uploads_are_no_longer_listed",),
    ),
    Mutation(
        "gateway-uploads-expired-records-dropped",
        "issue 24: an abandoned upload's record stops listing once its address expired",
        "kvlake/catalog/direct.py",
        "            if upload.initiated < expired_before:\n",
        "            if False:\n",
        (
            "tests/catalog/test_abandoned_uploads.py::"
            "test_an_abandoned_upload_is_aborted_once_its_address_expired",
        ),
    ),
    Mutation(
        "gateway-uploads-key-marker-exclusive",
        "issue 24: ListMultipartUploads resumes after the key marker's own uploads",
        "kvlake/gateway/uploads.py",
        "        if key == skip_key:\n            continue\n",
        "",
        ("tests/gateway/test_uploads.py::test_prefix_delimiter_and_markers_page_as_s3",),
    ),
    Mutation(
        "gateway-checksums-complete-part-mismatch",
        "issue 24: a Complete naming another part checksum than the part's is InvalidPart",
        "kvlake/gateway/multipart.py",
        "        if number in given and given[number] != checksum:\n",
        "        if False:\n",
        (
            "tests/gateway/test_checksums.py::"
            "test_a_complete_with_another_part_checksum_is_invalid_part",
        ),
    ),
    Mutation(
        "gateway-checksums-whole-object-only",
        "issue 24: checksums are returned when asked, and for a whole object only",
        "kvlake/gateway/reading.py",
        '    if call.header("x-amz-checksum-mode").upper() == "ENABLED" and status == 200:\n',
        "    if True:\n",
        (
            "tests/gateway/test_checksums.py::"
            "test_a_put_objects_checksum_comes_back_when_asked_and_after_a_commit",
        ),
    ),
    Mutation(
        "gateway-body-pace-is-the-servers",
        "issues 23/24: a gateway body keeps the server's pace (a trickled body is cut)",
        "kvlake/gateway/app.py",
        "            pace = limits.pace if limits is not None else self._pace\n",
        "            pace = self._pace\n",
        ("tests/gateway/test_limits.py::test_a_trickled_gateway_body_is_cut_as_a_rest_body_is",),
    ),
    Mutation(
        "cli-superuser-checks-server-key",
        "issue 27: `kvlake superuser` refuses a server key that cannot read the stored secrets",
        "kvlake/cli/superuser.py",
        "        auth.check_server_key()",
        "        pass",
        ("tests/cli/test_superuser.py::test_superuser_with_another_server_key_refuses",),
    ),
    Mutation(
        "cli-download-leaves-no-partial-file",
        "issue 27: a failed `kvlake fs download` leaves no half-written file",
        "kvlake/cli/fs.py",
        "                    partial.unlink(missing_ok=True)\n",
        "                    pass\n",
        ("tests/cli/test_fs.py::test_missing_objects_and_paths",),
    ),
    Mutation(
        "cli-gc-deleted-blob-is-gone",
        "issue 27: an object whose blob garbage collection deleted answers 410 Gone, not 404",
        "kvlake/catalog/catalog.py",
        "        except BlobNotFoundError as exc:\n"
        "            # The entry is there and its blob is not",
        "        except ObjectGoneError as exc:\n"
        "            # The entry is there and its blob is not",
        ("tests/cli/test_fs.py::test_an_object_whose_blob_gc_deleted_is_gone",),
    ),
    Mutation(
        "cli-lock-release-of-nothing-is-an-error",
        "issue 27: `kvlake lock release` of a path with no live lock fails instead of succeeding",
        "kvlake/cli/locks.py",
        "        if not held:\n",
        "        if False:\n",
        ("tests/cli/test_locks.py::test_acquire_list_and_release",),
    ),
    Mutation(
        "scale-cleaner-reads-markers",
        "issue 33 item 5: an idle cleaner pass reads creation markers, not every repository",
        "kvlake/graveler/lifecycle/cleaner.py",
        "        every_record, self._read_every_record = not self._read_every_record, True\n",
        "        every_record = True\n",
        ("tests/graveler/test_scale.py::test_an_idle_cleaner_pass_reads_no_repository_record",),
    ),
    Mutation(
        "scale-creation-marker-first",
        "invariant 1: every `initial` record has a creation marker the cleaner finds",
        "kvlake/graveler/lifecycle/repositories.py",
        '            self._store.set(keys.CREATIONS, marker, b"%.3f" % now)\n',
        "            pass\n",
        (
            "tests/graveler/test_scale.py::"
            "test_the_cleaner_finds_a_crashed_creation_through_its_marker_and_drops_the_marker",
        ),
    ),
    Mutation(
        "scale-creation-marker-kept-in-flight",
        "invariant 1: a creation's marker outlives its record's write (the cleaner waits)",
        "kvlake/graveler/lifecycle/repositories.py",
        "            elif self._clock() - float(written) > self._initial_timeout:\n",
        "            else:\n",
        (
            "tests/graveler/test_scale.py::"
            "test_a_marker_whose_record_is_not_written_yet_is_kept_until_the_timeout",
        ),
    ),
    Mutation(
        "scale-search-page-bounded",
        "issue 33 item 4: a search= page looks at a bounded number of repositories",
        "kvlake/api/pages.py",
        "        if count == examined:\n",
        "        if False:\n",
        (
            "tests/api/test_pages.py::"
            "test_a_search_page_looks_at_a_bounded_number_of_items_whatever_the_listing_holds",
        ),
    ),
    Mutation(
        "scale-orphan-sweep-slice",
        "issue 33 item 6: an orphan sweep looks at one slice of the partitions",
        "kvlake/graveler/lifecycle/orphans.py",
        "        listed = itertools.islice(self._store.partitions(after=first), self._slice)\n",
        "        listed = self._store.partitions(after=first)\n",
        (
            "tests/graveler/test_scale.py::"
            "test_an_orphan_sweep_looks_at_one_slice_of_partitions_whatever_the_store_holds",
        ),
    ),
    Mutation(
        "scale-orphan-notes-kept-outside-the-slice",
        "issue 33 item 6: a sweep forgets only the notes of the slice it looked at",
        "kvlake/graveler/lifecycle/orphans.py",
        "                if through is not None and key > through:\n",
        "                if False:\n",
        ("tests/graveler/test_scale.py::test_orphan_sweeps_in_slices_note_then_drop_every_orphan",),
    ),
    # -- operations: one record and one driver for every kind of long-running work (issue 26)
    Mutation(
        "ops26-driver-claim-respects-a-live-lease",
        "issue 26: one process at a time works on an operation of any kind (its lease)",
        "kvlake/operations/driver.py",
        '            if current.owner not in ("", self.owner) and current.lease_expires > now:\n'
        "                return None\n",
        "",
        (
            "tests/operations/test_driver.py::"
            "test_one_holder_at_a_time_and_a_lapsed_lease_is_taken_over",
            "tests/operations/test_crash_resume.py::"
            "test_a_killed_bulk_delete_resumes_and_completes_exactly[enumerating-local]",
        ),
    ),
    Mutation(
        "ops26-driver-only-the-holder-writes",
        "issue 26 / invariant 5: a process whose lease was taken over writes nothing more",
        "kvlake/operations/driver.py",
        "        if updated.owner != self.owner:\n            raise LostLeaseError\n",
        "",
        (
            "tests/operations/test_driver.py::"
            "test_one_holder_at_a_time_and_a_lapsed_lease_is_taken_over",
        ),
    ),
    Mutation(
        "ops26-driver-first-end-wins",
        "issue 26: a finished operation keeps its final status",
        "kvlake/operations/driver.py",
        "            if current.finished:\n                return None\n"
        "            return msgspec.structs.replace(\n                current,\n"
        "                status=status,\n",
        "            return msgspec.structs.replace(\n                current,\n"
        "                status=status,\n",
        ("tests/operations/test_driver.py::test_finish_lets_the_lease_go_and_the_first_end_wins",),
    ),
    Mutation(
        "ops26-gc-runner-adopts-only-its-own-runs-lease",
        "issue 26 (issue 22 #8 kept): a GC run's runner never takes another run's live lease",
        "kvlake/pipelines/gc/lease.py",
        "        if loaded is None or loaded[0].run_id != run_id or loaded[0].expires <= now:\n",
        "        if loaded is None or loaded[0].expires <= now:\n",
        (
            "tests/pipelines/test_gc_lease.py::"
            "test_the_runner_adopts_its_own_runs_lease_and_never_another_runs",
        ),
    ),
    Mutation(
        "ops26-runner-fair-between-creators",
        "issue 26: free threads go to the creator with the fewest operations running",
        "kvlake/operations/runner.py",
        "        creator = min(queues, key=lambda name: (load[name], queues[name][0].id))\n",
        "        creator = min(queues, key=lambda name: queues[name][0].id)\n",
        (
            "tests/operations/test_runner.py::"
            "test_free_threads_go_round_robin_the_least_busy_creator_first",
            "tests/operations/test_runner.py::"
            "test_a_runner_runs_up_to_its_concurrency_at_once_fairly",
        ),
    ),
    Mutation(
        "ops26-runner-bounded-by-its-concurrency",
        "issue 26: a process runs at most KVLAKE_OPERATIONS_CONCURRENCY operations at once",
        "kvlake/operations/runner.py",
        "        for operation in fair_order(pending, Counter(running.values()))"
        "[: max(free, 0)]:\n",
        "        for operation in fair_order(pending, Counter(running.values())):\n",
        (
            "tests/operations/test_runner.py::"
            "test_a_runner_runs_up_to_its_concurrency_at_once_fairly",
        ),
    ),
    Mutation(
        "ops26-server-background-off",
        "issue 26: KVLAKE_SERVER_BACKGROUND=false leaves the work to `kvlake worker` processes",
        "kvlake/api/app.py",
        "            if background_jobs and settings.server.background:\n",
        "            if background_jobs:\n",
        (
            "tests/api/test_worker_processes.py::"
            "test_a_worker_killed_mid_operation_leaves_it_to_the_other",
        ),
    ),
    Mutation(
        "ops26-clean-up-only-finished-operations",
        "issue 26: the runner's clean-up never drops a running operation's batches",
        "kvlake/operations/runner.py",
        "            if operation.finished:\n                self._clean(operation)\n"
        "                continue\n",
        "            self._clean(operation)\n            if operation.finished:\n"
        "                continue\n",
        (
            "tests/operations/test_runner.py::"
            "test_finished_operations_lose_their_leftover_batches_then_expire",
        ),
    ),
    Mutation(
        "ops26-finished-records-kept-for-their-retention",
        "issue 26: a finished operation's record and failures stay for KVLAKE_OPERATIONS_RETENTION",
        "kvlake/operations/runner.py",
        "                if operation.finished and operation.last_updated_at + retention <= now:\n",
        "                if operation.finished:\n",
        (
            "tests/operations/test_runner.py::"
            "test_finished_operations_lose_their_leftover_batches_then_expire",
        ),
    ),
    Mutation(
        "ops26-metadata-filter-all-pairs-match",
        "issue 26: a metadata filter deletes only objects holding every pair",
        "kvlake/operations/bulk_delete.py",
        "    return all(info.metadata.get(key) == value for key, value in wanted.items())\n",
        "    return True\n",
        (
            "tests/operations/test_bulk_delete.py::"
            "test_a_metadata_filter_takes_only_objects_holding_every_pair",
        ),
    ),
    Mutation(
        "ops26-free-storage-only-after-completion",
        "issue 26: free_storage collects garbage only after a completed bulk delete, once",
        "kvlake/operations/runner.py",
        "        if not wanted or operation.status not in"
        ' ("completed", "completed_with_errors"):\n',
        "        if not wanted:\n",
        (
            "tests/operations/test_runner.py::"
            "test_a_completed_bulk_delete_with_free_storage_starts_one_garbage_collection",
        ),
    ),
    Mutation(
        "ops26-gc-run-cancel-at-phase-boundary",
        "issue 26: a cancelled GC run starts no further phase (what is done stays done)",
        "kvlake/pipelines/gc/runs.py",
        "            if record.cancel_requested:\n                raise _Cancelled\n",
        "",
        (
            "tests/pipelines/test_gc_api.py::"
            "test_a_run_cancelled_mid_run_stops_at_the_next_phase_boundary",
        ),
    ),
    # sparkdata (issue 25, second session): staged jobs and overwrites of staged entries.
    Mutation(
        "sparkdata-batch-published-above-staged",
        "issue 25: a staged job's token is published above what the branch staged before",
        "kvlake/graveler/history/commits.py",
        "                sealed_tokens=(above, branch.staging_token, *branch.sealed_tokens),\n",
        "                sealed_tokens=(branch.staging_token, above, *branch.sealed_tokens),\n",
        (
            "tests/graveler/test_batches.py"
            "::test_a_published_batch_appears_in_one_swap_above_what_was_staged",
        ),
    ),
    Mutation(
        "sparkdata-batch-rotates-the-staging-token",
        "invariant 2 (issue 25): publishing a batch seals the staging token under it",
        "kvlake/graveler/history/commits.py",
        "                staging_token=keys.new_staging_token(repository.instance_uid),\n"
        "                sealed_tokens=(above,",
        "                sealed_tokens=(above,",
        (
            "tests/graveler/test_batches.py"
            "::test_a_published_batch_appears_in_one_swap_above_what_was_staged",
        ),
    ),
    Mutation(
        "sparkdata-shadowed-staged-blobs-logged",
        "invariant 4 (issue 25): an overwrite logs the staged blobs it hides before hiding them",
        "kvlake/graveler/staging/batches.py",
        "            hooks.before_unstage(repository, staged_token, page, None)\n",
        "            pass\n",
        (
            "tests/pipelines/test_dataset_staging.py::"
            "test_overwrite_replaces_staged_entries_too_and_logs_their_blobs[local-staged]",
        ),
    ),
    Mutation(
        "sparkdata-committed-overwrite-unstages-the-path",
        "issue 25: an overwrite with a commit also replaces what is staged under the path",
        "kvlake/pipelines/dataset_commit.py",
        "            above = shadows\n",
        "            pass\n",
        (
            "tests/pipelines/test_dataset_staging.py::"
            "test_overwrite_replaces_staged_entries_too_and_logs_their_blobs[local-committed]",
        ),
    ),
    Mutation(
        "sparkdata-staged-overwrite-hides-committed",
        "issue 25: a staged overwrite hides the committed entries under the path",
        "kvlake/pipelines/dataset_commit.py",
        "        batches.fill(target.token, ((key, None) for key, _ in committed))\n",
        "",
        (
            "tests/pipelines/test_dataset_staging.py::"
            "test_overwrite_replaces_staged_entries_too_and_logs_their_blobs[local-staged]",
        ),
    ),
    Mutation(
        "sparkdata-staged-job-records-name-its-token",
        "invariant 4 (issue 25): a staged job's blobs are kept while staged, deleted if dropped",
        "kvlake/pipelines/dataset_writer.py",
        "        lake.deletion_log, repository, address, now, token=target.token, path=path\n",
        '        lake.deletion_log, repository, address, now, token="", path=""\n',
        (
            "tests/pipelines/test_dataset_staging.py::"
            "test_a_job_without_a_commit_message_stages_its_files_in_one_swap[local]",
        ),
    ),
    Mutation(
        "sparkdata-staged-job-checks-staging-rules",
        "issue 25: a job without a commit obeys the branch's staging_write protection",
        "kvlake/pipelines/dataset_commit.py",
        '    return "commit" if message else "staging_write"\n',
        '    return "commit"\n',
        (
            "tests/pipelines/test_dataset_writes.py"
            "::test_bad_writes_are_refused_before_any_task[local]",
        ),
    ),
    Mutation(
        "sparkdata-merge-schema-merges-nested-structs",
        "issue 25: mergeSchema merges struct fields that differ between files, at any depth",
        "kvlake/pipelines/datasets.py",
        "    if isinstance(known, StructType) and isinstance(new, StructType):\n",
        "    if False:\n",
        (
            "tests/pipelines/test_datasets.py"
            "::test_merge_schema_merges_struct_fields_at_any_depth[local]",
        ),
    ),
    Mutation(
        "sparkdata-read-uses-its-planned-snapshot",
        "issue 25: a read's tasks read the files it listed, whatever the branch does meanwhile",
        "kvlake/pipelines/source.py",
        "        plan = self._plan if self._plan is not None else self._plan_read()\n",
        "        plan = self._plan_read()\n",
        (
            "tests/pipelines/test_dataset_races.py"
            "::test_a_read_planned_before_an_overwrite_returns_the_old_rows_only[local-committed]",
        ),
    ),
    Mutation(
        "sparkdata-reads-spread-over-the-cores",
        "issue 25 (benchmark): a small dataset's files spread over the cores, as Spark's do",
        "kvlake/pipelines/datasets.py",
        "    return min(max_bytes, max(OPEN_COST_BYTES, total // max(parallelism, 1)))\n",
        "    return min(max_bytes, max(OPEN_COST_BYTES, total))\n",
        (
            "tests/pipelines/test_datasets.py"
            "::test_a_small_dataset_is_spread_over_the_cores_as_spark_spreads_it",
        ),
    ),
    Mutation(
        "sparkdata-small-batches-one-row-group",
        "issue 25 (benchmark): a task's small Arrow batches are written as large row groups",
        "kvlake/pipelines/dataset_writer.py",
        "        if self._pending_bytes >= ROW_GROUP_BYTES:\n",
        "        if True:\n",
        (
            "tests/pipelines/test_dataset_staging.py"
            "::test_a_tasks_small_batches_become_one_row_group_per_file[local]",
        ),
    ),
    Mutation(
        "actions-webhook-allowed-hosts",
        "issue 30: a webhook reaches only loopback or the hosts an administrator allows",
        "kvlake/actions/webhook.py",
        "    if not host_allowed(host, allowed):\n",
        "    if False:\n",
        ("tests/actions/test_webhook.py::test_a_host_not_allowed_is_never_called",),
    ),
    Mutation(
        "actions-pre-hook-aborts",
        "issue 30: a failing pre-event hook (or invalid action file) refuses the operation",
        "kvlake/actions/service.py",
        "        if errors:\n            listed",
        "        if False:\n            listed",
        (
            "tests/api/test_hooks.py::test_invalid_action"
            "_file_fails_the_commit_naming_file_and_line",
        ),
    ),
    Mutation(
        "lead-metrics-folders-of-dead-servers-removed",
        "issue 27: a SIGKILLed server's metrics folder does not pile up (one per killed server)",
        "kvlake/cli/serve.py",
        "        if left.name.isdigit() and not _alive(int(left.name)):\n",
        "        if False:\n",
        (
            "tests/cli/test_observability.py::"
            "test_a_killed_servers_metrics_folder_is_removed_by_the_next_start",
        ),
    ),
    Mutation(
        "compat32-log-orders-by-nanoseconds",
        "issue 32: commits made in one second log in the order they were made, as on lakeFS",
        "kvlake/graveler/history/log.py",
        "        -commit.creation_nanos,\n",
        "",
        ("tests/graveler/test_log.py",),
    ),
    Mutation(
        "compat32-commits-record-nanoseconds",
        "issue 32: a commit records the sub-second part of its creation time",
        "kvlake/graveler/history/commits.py",
        "        seconds, nanos = commit_time(self._clock()) if date is None else (date, 0)\n",
        "        seconds, nanos = (int(self._clock()) if date is None else date), 0\n",
        ("tests/graveler/test_log.py",),
    ),
    Mutation(
        "lead-range-puts-done-before-finish",
        "invariant 4 / issue 28: a metarange is written only after every range file is stored",
        "kvlake/graveler/committed/writer.py",
        "    range_id, _ = store_file(blockstore, namespace, data, stats)\n",
        "    range_id = file_id(data)\n"
        "    _put_pool().submit(_store, blockstore, namespace, range_id, data, stats)\n",
        (
            "tests/graveler/committed/test_writer.py::"
            "test_finish_returns_only_once_every_range_file_is_stored",
        ),
    ),
    Mutation(
        "lead-range-put-pool-per-forked-child",
        "issue 28: a forked Spark worker's range puts run (the parent's threads are not there)",
        "kvlake/graveler/committed/writer.py",
        "os.register_at_fork(after_in_child=_forget_pool_in_child)\n",
        "",
        (
            "tests/graveler/committed/test_writer.py::"
            "test_a_forked_child_stores_ranges_with_threads_of_its_own",
        ),
    ),
    Mutation(
        "commit10m-batch-keys-checked-ascending",
        "invariant: a metarange's ranges are sorted and disjoint (a commit's staged pages too)",
        "kvlake/graveler/committed/writer.py",
        "        if batch.keys[0] <= self._last_key or not batch.ascending():\n",
        "        if False:\n",
        (
            "tests/graveler/committed/test_batches.py::"
            "test_batches_out_of_order_are_refused_within_and_across_batches",
        ),
    ),
    Mutation(
        "commit10m-change-in-dropped-range-refused",
        "issue 26: a change never falls into a range a commit drops unread (its keys come back)",
        "kvlake/graveler/committed/apply.py",
        "            if following is not None and following <= info.max_key:\n",
        "            if False:\n",
        ("tests/graveler/committed/test_batches.py",),
    ),
    Mutation(
        "commit10m-batch-keys-compared-in-arrow",
        "invariant: a metarange's ranges are sorted and disjoint (a batch's keys compared in"
        " Arrow, as Python compares bytes)",
        "kvlake/graveler/committed/batches.py",
        "        following = pc.less(keys.slice(0, len(keys) - 1), keys.slice(1))\n",
        "        following = pc.less_equal(keys.slice(0, len(keys) - 1), keys.slice(1))\n",
        (
            "tests/graveler/committed/test_batches.py::"
            "test_batches_out_of_order_are_refused_within_and_across_batches",
        ),
    ),
    Mutation(
        "commit10m-split-values-check-their-data-length",
        "issue 28: staged values are cut into columns only if each one's data is exactly the"
        " length its header says (else decoded one by one, which refuses a broken value)",
        "kvlake/graveler/committed/batches.py",
        "    if not pc.all(pc.equal(declared, pc.binary_length(datas))).as_py():\n",
        "    if False:\n",
        (
            "tests/graveler/committed/test_batches.py::"
            "test_a_value_that_is_no_encoded_value_is_refused_among_good_ones",
        ),
    ),
    Mutation(
        "commit10m-split-values-share-the-identity-header",
        "issue 28: staged values are cut at one identity length only if every value has it",
        "kvlake/graveler/committed/batches.py",
        "pc.equal(pc.binary_slice(encoded, 0, 3), prefix)",
        "pc.equal(pc.binary_slice(encoded, 0, 2), pc.binary_slice(prefix, 0, 2))",
        (
            "tests/graveler/committed/test_batches.py::test_values_with_another_"
            "identity_length_are_decoded_whatever_their_data_holds",
        ),
    ),
    # -- imports as operations on the one driver (issue 26, part 1)
    Mutation(
        "ops26-import-names-its-head-before-publishing",
        "issue 26: before a publish attempt the record names the head it builds on",
        "kvlake/catalog/import_runs.py",
        "            record = driver.checkpoint("
        "operation_id, committing=True, base_commit=head_id)\n",
        "            record = driver.ledger.load(operation_id)[0]\n",
        (
            "tests/catalog/test_imports.py::"
            "test_a_resumed_import_whose_commit_landed_completes_with_it_and_commits_nothing_more",
        ),
    ),
    Mutation(
        "ops26-import-resume-finds-its-landed-commit",
        "issue 26: a resumed import whose commit landed completes with it, never commits twice",
        "kvlake/catalog/import_runs.py",
        "            if published:\n",
        "            if False:\n",
        (
            "tests/catalog/test_imports.py::"
            "test_a_resumed_import_whose_commit_landed_completes_with_it_and_commits_nothing_more",
        ),
    ),
    Mutation(
        "ops26-import-resume-adopts-only-its-own-commit",
        "issue 26: a resumed import never takes another writer's commit for its own",
        "kvlake/catalog/import_runs.py",
        "                wanted = (job.committer, job.message, job.metadata)\n"
        '                return commit_id if ours == wanted else ""\n',
        "                return commit_id\n",
        (
            "tests/catalog/test_imports.py::"
            "test_a_resumed_import_whose_commit_never_landed_publishes_its_metarange",
        ),
    ),
    Mutation(
        "ops26-import-status-is-its-repositorys",
        "issue 26: importStatus answers only for an import record of that repository instance",
        "kvlake/catalog/imports.py",
        "            or (operation.repository, operation.instance_uid)\n"
        "            != (repository.name, repository.instance_uid)\n",
        "",
        ("tests/catalog/test_imports.py::test_an_import_is_an_operation_listed_with_every_kind",),
    ),
    Mutation(
        "ops26-import-cancel-refuses-a-completed-one",
        "issue 26: a completed import's cancel is a 409 naming its commit",
        "kvlake/catalog/imports.py",
        '            if current.status == "completed":\n',
        "            if False:\n",
        ("tests/catalog/test_imports.py::test_a_canceled_import_commits_nothing",),
    ),
    Mutation(
        "ops26-heartbeat-renews",
        "issue 26: a long step with no checkpoint keeps its operation's lease",
        "kvlake/operations/heartbeat.py",
        "                self._driver.checkpoint(self._operation_id)\n",
        "                pass\n",
        (
            "tests/operations/test_driver.py::"
            "test_a_heartbeat_renews_the_lease_while_its_holder_is_busy_and_stops_once_lost",
        ),
    ),
    Mutation(
        "actions30-lua-pcall-passes-timeout-on",
        "issue 30: a lua loop around pcall cannot swallow the timeout and run forever",
        "kvlake/actions/lua.py",
        "pcall, xpcall = rethrow_late(pcall), rethrow_late(xpcall)\n",
        "\n",
        (
            "tests/actions/test_lua.py::test_an_endless_loop_stops_at_the_timeout_even_under_pcall",
            "tests/actions/test_lua.py::test_an_endless_l"
            "oop_stops_at_the_timeout_even_under_xpcall",
        ),
    ),
    Mutation(
        "actions30-lua-globals-removed",
        "issue 30: a lua hook reaches no os/io/load/python (the sandbox)",
        "kvlake/actions/lua.py",
        "for _, name in ipairs(removed) do _G[name] = nil end\n",
        "\n",
        ("tests/actions/test_lua.py::test_no_way_out_of_the_sandbox",),
    ),
    Mutation(
        "ui-csrf-token-checked",
        "issue 29: a UI form that does not repeat its CSRF cookie changes nothing",
        "kvlake/ui/page.py",
        "        if form is not None and not security.token_matches(",
        "        if False and not security.token_matches(",
        ("tests/ui/test_security.py::test_a_form_without_its_csrf_token_changes_nothing",),
    ),
    Mutation(
        "ui-login-returns-to-this-site-only",
        "issue 29: after login the browser goes to a /ui page of this site, never elsewhere",
        "kvlake/ui/security.py",
        'and (target == UI_PREFIX or target.startswith(UI_PREFIX + "/"))',
        "and True",
        ("tests/ui/test_security.py::test_login_returns_only_to_this_sites_pages",),
    ),
    Mutation(
        "ui-signed-root-stays-the-gateways",
        "issue 29: a signed GET / is S3's ListBuckets, not the UI's home page",
        "kvlake/ui/route.py",
        '    if b"authorization" in headers:',
        "    if False:",
        ("tests/ui/test_security.py::test_a_signed_s3_request_to_the_root_stays_the_gateways",),
    ),
    Mutation(
        "ui-no-session-goes-to-login",
        "issue 29: a page without a live session sends the browser to login, then back",
        "kvlake/ui/page.py",
        "            if page.user is None:",
        "            if False:",
        ("tests/ui/test_login.py::test_an_expired_session_logs_in_again_and_returns",),
    ),
    Mutation(
        "ui-repository-delete-needs-its-name-typed",
        "issue 29: the UI deletes a repository only when its name is typed to confirm",
        "kvlake/ui/pages/repositories.py",
        '    if page.form.get("confirm", "") != name:',
        "    if False:",
        ("tests/ui/test_repositories.py::test_delete_without_the_name_typed_deletes_nothing",),
    ),
    Mutation(
        "ui-repository-delete-hidden-from-readers",
        "issue 29: a user whose policies refuse deleteRepository is not offered the form",
        "kvlake/ui/pages/repositories.py",
        'may_delete=page.may("deleteRepository", path={"repository": name}),',
        "may_delete=True,",
        (
            "tests/ui/test_repositories.py::"
            "test_a_reader_sees_no_delete_and_an_unknown_repository_says_so",
        ),
    ),
    Mutation(
        "ui-parquet-preview-bounded",
        "issue 29: a Parquet preview never reads more than its byte budget of the object",
        "kvlake/ui/previews.py",
        "        if end - self._at > self._left:",
        "        if False:",
        ("tests/ui/test_preview_bounds.py::test_a_parquet_row_group_over_the_budget_is_not_read",),
    ),
    Mutation(
        "actions30-lua-libraries-behind-closures",
        "issue 30: a lua hook sees lakeFS's library functions as Lua closures, no Python object",
        "kvlake/actions/lua.py",
        "  for name, call in pairs(functions) do wrapped[name] = checked(call) end\n",
        "  for name, call in pairs(functions) do wrapped[name] = call end\n",
        ("tests/actions/test_lua.py::test_library_functions_are_lua_closures_not_python_objects",),
    ),
    Mutation(
        "actions30-lua-text-chunks-only",
        "issue 30: a lua hook cannot load bytecode, which Lua does not verify",
        "kvlake/actions/lua.py",
        'compiled = runtime.compile(lua_bytes(script), name="lua", mode="t")',
        'compiled = runtime.compile(lua_bytes(script), name="lua")',
        ("tests/actions/test_lua.py::test_a_binary_chunk_is_refused",),
    ),
    Mutation(
        "actions30-lua-lakefs-acts-as-the-request-s-user",
        "issue 30: a lua hook's lakefs calls act as the user whose request triggered it",
        "kvlake/api/routing.py",
        "        with acting_as(call.user_id):  # a Lua hook's `lakefs` calls act as this caller\n"
        "            return operation.handler(call)\n",
        "        return operation.handler(call)\n",
        (
            "tests/api/test_lua_hooks.py"
            "::test_a_hook_on_an_event_without_a_committer_acts_as_the_requesting_user",
        ),
    ),
    Mutation(
        "actions30-lua-lakefs-call-has-its-user",
        "issue 30: a lua hook's lakefs call is authorized as its user, not refused or anonymous",
        "kvlake/api/hook_calls.py",
        "        call.user = user\n",
        "",
        (
            "tests/api/test_lua_hooks.py"
            "::test_a_hook_on_an_event_without_a_committer_acts_as_the_requesting_user",
        ),
    ),
    Mutation(
        "actions30-hook-runs-counted",
        "issue 30: /metrics counts action hook runs by event, hook type and outcome",
        "kvlake/actions/service.py",
        "                self._observe(event.event_type, hook.type,"
        ' "passed" if passed else "failed")\n',
        "",
        (
            "tests/api/test_lua_hooks.py"
            "::test_lakefs_s_metadata_hook_refuses_a_comm"
            "it_without_metadata_and_passes_one_with_it",
        ),
    ),
    Mutation(
        "actions30-post-event-queued-before-its-hooks",
        "issue 30: a post-event is in the KV queue while its hooks run (survives a restart)",
        "kvlake/actions/service.py",
        "            before_hooks()\n",
        "            pass\n",
        ("tests/actions/test_queue.py",),
    ),
    Mutation(
        "actions30-queued-post-event-waits-for-its-lease",
        "issue 30: a queued post-event is not run twice while its process still holds it",
        "kvlake/actions/queue.py",
        "            if pending.lease_expires > now:\n                continue\n",
        "",
        ("tests/actions/test_queue.py",),
    ),
    Mutation(
        "actions30-lua-nesting-bounded",
        "issue 30: lua hooks that trigger each other through lakefs calls stop at a depth",
        "kvlake/actions/lua.py",
        "    if depth >= MAX_NESTING:\n",
        "    if False:\n",
        (
            "tests/api/test_lua_hooks.py"
            "::test_hooks_that_trigger_each_other_stop_at_the_nesting_limit",
        ),
    ),
    Mutation(
        "ui-ref-actions-hidden-from-readers",
        "issue 29: a user whose policies refuse createBranch is not offered the form",
        "kvlake/ui/pages/refs.py",
        'may_create_branch=page.may("createBranch", path=path, body=probe),',
        "may_create_branch=True,",
        ("tests/ui/test_refs.py::test_a_reader_sees_every_repository_page_but_no_actions",),
    ),
    Mutation(
        "ui-upload-offered-on-branches-only",
        "issue 29: a folder at a tag or commit offers no upload form",
        "kvlake/ui/pages/objects.py",
        "writable = page.is_branch(repository, ref) and page.may(",
        "writable = True and page.may(",
        ("tests/ui/test_changes.py::test_upload_reset_commit_and_delete_walk",),
    ),
    Mutation(
        "ui-upload-read-only-from-a-session",
        "issue 29: the UI spools an upload's file only for a signed-in browser",
        "kvlake/ui/page.py",
        "                and await loop.run_in_executor(pool, _session_user, request) is not None",
        "                or True",
        (
            "tests/ui/test_security.py::test_an_upload_is_"
            "read_only_from_a_session_and_stored_as_sent",
        ),
    ),
    Mutation(
        "ui-upload-file-type-never-a-form",
        "issue 29: an uploaded file whose type is multipart is stored as sent, not parsed",
        "kvlake/ui/calls.py",
        '        content_type = ""  # the file\'s own bytes, never parsed as a form',
        "        pass",
        (
            "tests/ui/test_security.py::test_an_upload_is_"
            "read_only_from_a_session_and_stored_as_sent",
        ),
    ),
    Mutation(
        "ui-merge-conflicts-listed",
        "issue 29: a merge that conflicts lists the conflicting paths with the form again",
        "kvlake/ui/pages/compare.py",
        "        if not isinstance(conflict, MergeConflictError):",
        "        if True:",
        ("tests/ui/test_compare.py::test_compare_then_merge_with_and_without_a_strategy",),
    ),
    Mutation(
        "ui-progress-bar-polls-until-finished",
        "issue 29: an operation's progress bar keeps polling its status until it has finished",
        "kvlake/ui/static/ui.js",
        "          window.setTimeout(poll, POLL_MS);",
        "          void 0;",
        (
            "tests/ui/test_operations.py::test_a_bulk_delet"
            "e_started_in_the_ui_reaches_100_percent_live",
        ),
    ),
    Mutation(
        "ui-protection-rules-change-only-as-shown",
        "issue 29: a protection rules form sent from an out-of-date page changes nothing",
        "kvlake/ui/pages/refs.py",
        '        headers={"If-Match": etag},',
        "        headers={},",
        ("tests/ui/test_refs.py::test_branch_and_tag_actions_walk",),
    ),
    Mutation(
        "spark25-commit-rechecks-protection",
        "issue 25: a protection rule that appeared while a job ran refuses its commit",
        "kvlake/pipelines/dataset_commit.py",
        "    lake.graveler.protection.check(repository, target.branch, _action(target.message))\n",
        "",
        (
            "tests/pipelines/test_dataset_commit_rechecks.py::"
            "test_what_appeared_during_the_job_refuses_its_commit",
        ),
    ),
    Mutation(
        "spark25-commit-rechecks-locks",
        "issue 25: a write lock or bulk delete that appeared while a job ran refuses its commit",
        "kvlake/pipelines/dataset_commit.py",
        "    check_unlocked(lake, repository, target.branch, target.root)\n",
        "",
        (
            "tests/pipelines/test_dataset_commit_rechecks.py::"
            "test_what_appeared_during_the_job_refuses_its_commit",
        ),
    ),
    Mutation(
        "scale33-idle-pass-reads-the-live-index",
        "issue 33: a runner's idle pass reads the live operations, not every finished one",
        "kvlake/operations/runner.py",
        "        for operation in self.context.ledger.unfinished():\n",
        "        for operation in self.context.ledger.list():\n",
        ("tests/operations/test_runner.py::test_an_idle_pass_reads_no_finished_operation",),
    ),
    Mutation(
        "scale33-cleaned-operations-leave-the-index",
        "issue 33: a finished operation, once cleaned, leaves the runners' index",
        "kvlake/operations/runner.py",
        "            ledger.retire(operation.id)\n",
        "",
        ("tests/operations/test_runner.py::test_an_idle_pass_reads_no_finished_operation",),
    ),
    Mutation(
        "restore-cut-short-fails",
        "issue 26: a restore resumed after it began writing fails clearly, never runs again",
        "kvlake/operations/refs_tasks.py",
        '            if operation.status == "in_progress" and not dumps.is_bare(repository):',
        "            if False:",
        (
            "tests/api/test_dump_tasks.py::"
            "test_a_restore_resumed_after_it_began_writing_fails_clearly",
        ),
    ),
    Mutation(
        "ui-admin-navigation-for-admins-only",
        "issue 29: the Users link shows only to users allowed listUsers",
        "kvlake/ui/pages/admin.py",
        'NavItem("Users", "/ui/admin/users", "listUsers"),',
        'NavItem("Users", "/ui/admin/users", "listRepositories"),',
        ("tests/ui/test_admin.py::test_a_non_admin_sees_no_administration",),
    ),
    Mutation(
        "ui-gc-rule-days-checked",
        "issue 29: GC rule days that are not a whole number are refused before anything is sent",
        "kvlake/ui/pages/settings.py",
        "    if not text.isdigit():",
        "    if False:",
        ("tests/ui/test_settings_and_actions.py::test_gc_rules_set_changed_and_deleted",),
    ),
    Mutation(
        "actions30-airflow-host-allow-list",
        "issue 30: an airflow hook reaches only hosts an administrator allows",
        "kvlake/actions/airflow.py",
        "    if not host_allowed(host, allowed):\n",
        "    if False:\n",
        ("tests/actions/test_airflow.py::test_a_host_not_allowed_is_never_called",),
    ),
    Mutation(
        "actions30-airflow-env-prefix",
        "issue 30: an action file reads only LAKEFSACTION_ environment variables",
        "kvlake/actions/airflow.py",
        "        if not name.startswith(ENV_PREFIX):\n",
        "        if False:\n",
        ("tests/actions/test_airflow_parsing.py",),
    ),
    Mutation(
        "actions30-airflow-failed-dag-fails-hook",
        "issue 30: a failed DAG run fails its airflow hook (and refuses a pre-event)",
        "kvlake/actions/airflow.py",
        '        if state == "failed":\n',
        '        if state == "never":\n',
        ("tests/actions/test_airflow.py::test_a_failed_dag_run_refuses_the_commit",),
    ),
    Mutation(
        "actions30-pre-bulk-delete-gate",
        "issue 30: a failing pre-bulk-delete hook refuses the bulk delete, nothing recorded",
        "kvlake/operations/bulk_delete.py",
        "        if self.graveler.events is not None:\n",
        "        if False:\n",
        (
            "tests/actions/test_bulk_delete_hooks.py"
            "::test_a_failing_pre_bulk_delete_hook_refuses_the_request_recording_nothing",
        ),
    ),
    Mutation(
        "ui-form-capped",
        "issue 23: a UI form without a file is capped in bytes as it is read",
        "kvlake/ui/forms.py",
        "        if not files:\n            stream = _capped(",
        "        if False:\n            stream = _capped(",
        ("tests/api/test_limits.py::test_a_ui_form_over_its_cap_is_refused_as_it_passes_it",),
    ),
    Mutation(
        "ui-form-paced",
        "issue 23: a UI form's body keeps the body pace (a stalled form gets 408)",
        "kvlake/ui/forms.py",
        "AsyncGenerator[bytes, None] = chunks(request, limits.pace)",
        "AsyncGenerator[bytes, None] = request.stream()",
        ("tests/api/test_limits.py::test_a_stalled_ui_form_gets_408",),
    ),
    Mutation(
        "lead26-commit-drops-range-tombstones-unread",
        "issue 26: a commit drops a wholly tombstoned range whole (its keys left out of the scan)",
        "kvlake/graveler/committed/apply.py",
        "        if info.id in dropped:\n",
        "        if False:\n",
        (
            "tests/graveler/test_range_tombstones.py::test_a_commit"
            "_drops_wholly_tombstoned_ranges_without_reading_them",
        ),
    ),
    Mutation(
        "lead26-range-with-staged-entries-goes-key-by-key",
        "issue 26: a range tombstone with entries staged in its span is not dropped whole",
        "kvlake/graveler/staging/store.py",
        "                or self._stages_within(info.min_key, info.max_key)\n",
        "",
        (
            "tests/graveler/test_range_tombstones.py::test_entries_"
            "staged_in_the_token_win_and_new_keys_are_never_hidden",
        ),
    ),
    Mutation(
        "lead26-range-with-kept-keys-goes-key-by-key",
        "issue 26: a range tombstone that keeps some keys is not dropped whole",
        "kvlake/graveler/staging/store.py",
        "                or record.keep\n",
        "",
        (
            "tests/graveler/test_range_tombstones.py::test_a_c"
            "ommit_drops_range_tombstones_and_keeps_the_rest",
        ),
    ),
    Mutation(
        "fast28-read-branch-checks-instance",
        "issue 28: a remembered instance uid is used only while the record still names it",
        "kvlake/graveler/lifecycle/repositories.py",
        '                if repository.state == "active" and repository.instance_uid == uid:\n',
        '                if repository.state == "active":\n',
        (
            "tests/graveler/test_branch_reads.py"
            "::test_a_name_recreated_by_another_process_is_read_from_its_new_instance",
        ),
    ),
    Mutation(
        "fast28-read-branch-checks-state",
        "issue 28 / invariant 1: a joint read serves only an active repository",
        "kvlake/graveler/lifecycle/repositories.py",
        '                if repository.state == "active" and repository.instance_uid == uid:\n',
        "                if repository.instance_uid == uid:\n",
        (
            "tests/graveler/test_branch_reads.py"
            "::test_a_repository_deleted_by_another_process_is_gone_at_once",
        ),
    ),
    Mutation(
        "fast28-put-folder-known-by-identity",
        "issue 28: a put skips the folder's link check only for a folder checked before",
        "kvlake/blockstore/local.py",
        "                if self._checked.known(folder, opened):\n",
        "                if True:\n",
        ("tests/blockstore/test_local.py::test_key_linked_out_of_its_namespace_is_refused",),
    ),
    Mutation(
        "fast28-checked-folder-by-identity-not-path",
        "issue 28: a checked folder swapped for a link leading out is checked again",
        "kvlake/blockstore/local_folders.py",
        "        return self._checked.get(folder) == opened\n",
        "        return folder in self._checked\n",
        (
            "tests/blockstore/test_local.py"
            "::test_a_folder_swapped_for_a_link_after_a_put_is_checked_again",
        ),
    ),
    Mutation(
        "fast28-new-folders-checked-before-creation",
        "issue 28: no folder is created through a link leading out of the namespace",
        "kvlake/blockstore/local.py",
        "            self._blob_path(namespace, key)"
        "  # no link out along the way before creating any\n",
        "            pass\n",
        (
            "tests/blockstore/test_local.py"
            "::test_a_new_folder_below_a_link_out_is_refused_before_it_is_created",
        ),
    ),
    Mutation(
        "fast28-blob-fsynced-before-its-name",
        "invariant 4: a blob's data is durable before the rename that names it",
        "kvlake/blockstore/local.py",
        "                os.fsync(file.fileno())\n",
        "                pass\n",
        (
            "tests/blockstore/test_local.py"
            "::test_a_put_fsyncs_the_blob_before_renaming_it_and_the_folder_after",
        ),
    ),
    Mutation(
        "fast28-put-folder-fsynced-after-rename",
        "invariant 4: a put returns only once its rename is durable (the folder fsynced)",
        "kvlake/blockstore/local.py",
        "            self._syncs.sync(folder, lambda: self._fsync_descriptor(descriptor, what))\n",
        "            pass\n",
        (
            "tests/blockstore/test_local.py"
            "::test_a_put_fsyncs_the_blob_before_renaming_it_and_the_folder_after",
        ),
    ),
    Mutation(
        "fast28-blob-path-one-resolution",
        "issue 28: a blob path is taken unchecked only when it resolves to itself (no link)",
        "kvlake/blockstore/local.py",
        "        if os.path.realpath(lexical) == lexical:\n",
        "        if True:\n",
        (
            "tests/blockstore/test_local.py::test_key_linked_out_of_its_namespace_is_refused",
            "tests/blockstore/test_local.py::test_namespace_linked_out_of_the_root_is_refused",
        ),
    ),
    Mutation(
        "scale33-repos-creation-indexes-its-instance",
        "issue 33 item 5: a creation indexes its instance before writing its record",
        "kvlake/graveler/lifecycle/repositories.py",
        "            self._live.add(name, record.instance_uid)"
        "  # before the record: listings find it\n",
        "            pass\n",
        ("tests/graveler/test_live_repositories.py::test_a_listing_reads_no_deleted_repository",),
    ),
    Mutation(
        "scale33-repos-deletion-unlists-its-instance",
        "issue 33 item 5: a deletion takes its instance out of the live index",
        "kvlake/graveler/lifecycle/repositories.py",
        "        self._unlist(repository)\n",
        "",
        ("tests/graveler/test_live_repositories.py::test_a_listing_reads_no_deleted_repository",),
    ),
    Mutation(
        "scale33-repos-listing-drops-a-tombstoned-key",
        "issue 33 item 5: a listing drops the key of an instance it finds tombstoned",
        "kvlake/graveler/lifecycle/liverepos.py",
        "                    self.drop(name, uid)"
        "  # its deletion stopped between tombstone and drop\n",
        "                    pass\n",
        (
            "tests/graveler/test_live_repositories.py"
            "::test_a_recreated_name_is_listed_once_and_a_stale_key_is_dropped_when_met",
        ),
    ),
    Mutation(
        "scale33-repos-listing-keeps-a-creation-in-flight",
        "issue 33 item 5: a key whose creation marker is there is not dropped",
        "kvlake/graveler/lifecycle/liverepos.py",
        "            elif not self._creating(name, uid):\n",
        "            else:\n",
        ("tests/graveler/test_live_repositories.py::test_a_creation_in_flight_keeps_its_key",),
    ),
    Mutation(
        "scale33-repos-listing-drops-a-replaced-key",
        "issue 33 item 5: a listing drops the key of an instance another replaced",
        "kvlake/graveler/lifecycle/liverepos.py",
        "                self.drop(name, uid)"
        "  # an instance deleted and replaced, or never written\n",
        "                pass\n",
        (
            "tests/graveler/test_live_repositories.py"
            "::test_a_recreated_name_is_listed_once_and_a_stale_key_is_dropped_when_met",
        ),
    ),
    Mutation(
        "scale33-repos-cleaner-drops-the-key",
        "issue 33 item 5: the cleaner drops a cleaned instance's live key",
        "kvlake/graveler/lifecycle/cleaner.py",
        "                    keys.LIVE_REPOSITORIES,"
        " keys.live_repository_key(entry.name, entry.instance_uid)\n",
        "                    keys.LIVE_REPOSITORIES, b'-'\n",
        (
            "tests/graveler/test_crashes.py"
            "::test_crash_during_delete_leaves_repository_whole_or_gone_and_cleaner_removes_all",
        ),
    ),
    Mutation(
        "scale33-repos-old-store-builds-the-index",
        "issue 33 item 5: a store written before the live index gets it built",
        "kvlake/graveler/lifecycle/liverepos.py",
        '                        if r.state != "deleted"\n',
        "                        if False\n",
        (
            "tests/graveler/test_live_repositories.py"
            "::test_a_store_written_before_the_live_index_gets_it_on_first_use",
        ),
    ),
    Mutation(
        "scale33-repos-stale-creation-drops-its-key",
        "issue 33 item 5: a crashed creation's key goes with its marker",
        "kvlake/graveler/lifecycle/repositories.py",
        "                self._live.drop(name, uid)  # its key, if it wrote one before losing\n",
        "",
        (
            "tests/graveler/test_crashes.py"
            "::test_crash_during_create_never_exposes_a_half_created_repository",
        ),
    ),
    Mutation(
        "scale33-tombstones-queued-when-cleaned",
        "issue 33 item 5: a cleaned instance's tombstone is queued to go",
        "kvlake/graveler/lifecycle/cleaner.py",
        "                self._tombstones.queue(entry.name, entry.instance_uid)\n",
        "",
        (
            "tests/graveler/test_tombstones.py"
            "::test_a_cleaned_tombstone_goes_after_its_grace_and_listings_do_not_change",
        ),
    ),
    Mutation(
        "scale33-tombstones-kept-while-cleaning",
        "issue 33 item 5: a tombstone stays while its instance is being cleaned",
        "kvlake/graveler/lifecycle/tombstones.py",
        "            self._store.get("
        "keys.DELETED_REPOSITORIES, keys.deleted_repository_key(name, uid))\n",
        "            raise KeyNotFoundError(name)\n",
        (
            "tests/graveler/test_tombstones.py"
            "::test_a_tombstone_whose_instance_is_not_cleaned_is_kept",
        ),
    ),
    Mutation(
        "scale33-tombstones-kept-for-the-grace",
        "issue 33 item 5: a tombstone stays for the grace counted from its deletion",
        "kvlake/graveler/lifecycle/tombstones.py",
        "            elif now - record.state_changed < self._grace:\n",
        "            elif False:\n",
        (
            "tests/graveler/test_tombstones.py"
            "::test_a_tombstone_younger_than_the_grace_is_kept_even_when_queued_earlier",
        ),
    ),
    Mutation(
        "scale33-tombstones-only-their-instance",
        "issue 33 item 5: an expiry never removes another instance's record",
        "kvlake/graveler/lifecycle/tombstones.py",
        '            if record.instance_uid != uid or record.state != "deleted":\n',
        '            if record.state != "deleted":\n',
        (
            "tests/graveler/test_tombstones.py"
            "::test_a_later_instances_tombstone_is_not_removed_by_the_earlier_ones_entry",
        ),
    ),
    Mutation(
        "scale33-tombstones-only-deleted-records",
        "issue 33 item 5: an expiry removes only a deleted record",
        "kvlake/graveler/lifecycle/tombstones.py",
        '            if record.instance_uid != uid or record.state != "deleted":\n',
        "            if record.instance_uid != uid:\n",
        (
            "tests/graveler/test_tombstones.py"
            "::test_a_queue_entry_naming_a_live_instance_never_removes_it",
        ),
    ),
    Mutation(
        "scale33-tombstones-guarded-delete",
        "issue 33 item 5: a creation replacing a tombstone as it expires keeps its record",
        "kvlake/graveler/lifecycle/tombstones.py",
        "                removed = self._store.delete_if(keys.REPOSITORIES, record_key, raw)\n",
        "                self._store.delete(keys.REPOSITORIES, record_key)\n"
        "                removed = True\n",
        (
            "tests/graveler/test_tombstones.py"
            "::test_a_creation_replacing_the_tombstone_as_it_expires_keeps_its_record",
        ),
    ),
    Mutation(
        "scale33-tombstones-older-queued",
        "issue 33 item 5: tombstones written before the queue are queued",
        "kvlake/graveler/lifecycle/tombstones.py",
        '                    self._store.set(keys.TOMBSTONES, key, b"")\n',
        "                    pass\n",
        (
            "tests/graveler/test_tombstones.py"
            "::test_tombstones_older_than_the_queue_are_queued_once_and_go",
        ),
    ),
    Mutation(
        "scale33-tombstones-older-queued-once",
        "issue 33 item 5: the tombstones before the queue are queued once per store",
        "kvlake/graveler/lifecycle/tombstones.py",
        "            self._store.get(keys.INDEXES, keys.TOMBSTONES_QUEUED)\n            return 0\n",
        "            self._store.get(keys.INDEXES, keys.TOMBSTONES_QUEUED)\n",
        (
            "tests/graveler/test_tombstones.py"
            "::test_tombstones_older_than_the_queue_are_queued_once_and_go",
        ),
    ),
    Mutation(
        "scale33-pulls-open-listing-reads-the-index",
        "issue 33 item 5: listing open pull requests reads their index, not every record",
        "kvlake/graveler/pulls.py",
        "            yield from self._open(repository, prefix=prefix, after=after)\n"
        "            return\n",
        "            pass\n",
        ("tests/graveler/test_open_pulls.py::test_listing_open_pull_requests_reads_no_closed_one",),
    ),
    Mutation(
        "scale33-pulls-creation-indexes",
        "issue 33 item 5: a new pull request is indexed as open before its record",
        "kvlake/graveler/pulls.py",
        '        self._store.set(_index(partition), pull_id.encode(), b"")  # before it is open\n',
        "        pass\n",
        ("tests/graveler/test_open_pulls.py::test_listing_open_pull_requests_reads_no_closed_one",),
    ),
    Mutation(
        "scale33-pulls-close-unindexes",
        "issue 33 item 5: closing or merging a pull request takes it out of the open index",
        "kvlake/graveler/pulls.py",
        "            self._unindex(partition, pull_id)\n",
        "            pass\n",
        ("tests/graveler/test_open_pulls.py::test_listing_open_pull_requests_reads_no_closed_one",),
    ),
    Mutation(
        "scale33-pulls-listing-drops-a-closed-key",
        "issue 33 item 5: a listing drops the key of a pull request it finds closed",
        "kvlake/graveler/pulls.py",
        "                self._unindex(partition, pull_id)"
        "  # its close stopped before unindexing\n",
        "                pass\n",
        (
            "tests/graveler/test_open_pulls.py::test_a_reopened_pull"
            "_request_is_listed_and_a_stale_key_is_dropped_when_met",
        ),
    ),
    Mutation(
        "scale33-pulls-unindex-restores-a-raced-reopening",
        "issue 33 item 5: a close that raced a reopening puts the open key back",
        "kvlake/graveler/pulls.py",
        '        if loaded is not None and decode_pull_request(loaded[0]).status == "open":\n'
        '            self._store.set(_index(partition), pull_id.encode(), b"")\n',
        "        if False:\n            pass\n",
        ("tests/graveler/test_open_pulls.py::test_a_reopening_racing_a_close_keeps_its_key",),
    ),
    Mutation(
        "scale33-pulls-old-repository-builds-the-index",
        "issue 33 item 5: a repository written before the open index gets it built",
        "kvlake/graveler/pulls.py",
        '                    if decode_pull_request(raw).status == "open":\n',
        "                    if False:\n",
        (
            "tests/graveler/test_open_pulls.py::test_a_repository"
            "_written_before_the_index_gets_it_on_first_listing",
        ),
    ),
    Mutation(
        "scale33-branches-visible-listing-reads-the-index",
        "issue 33 item 5: listing visible branches reads their index, not the hidden ones",
        "kvlake/graveler/refs/store.py",
        "        if visible_only:\n",
        "        if False:\n",
        (
            "tests/graveler/test_visible_branches.py::test_"
            "listing_visible_branches_reads_no_hidden_one",
        ),
    ),
    Mutation(
        "scale33-branches-creation-indexes-after",
        "issue 33 item 5: a visible branch's key is checked after its record is written",
        "kvlake/graveler/refs/store.py",
        "        if not branch.hidden:\n            self._visible.keep(partition, name)\n",
        "",
        (
            "tests/graveler/test_visible_branches.py::test_a_listing_"
            "between_a_creations_key_and_its_record_does_not_lose_it",
            "tests/interleavings/test_visible_branches.py",
        ),
    ),
    Mutation(
        "reqpath28-branch-key-rewritten-only-when-gone",
        "issue 28: after its record, a creation writes its visible-branch key again when a"
        " deletion or a listing took it out (a read, not a write, when nothing did)",
        "kvlake/graveler/refs/visible.py",
        "        except KeyNotFoundError:\n"
        '            self._store.set(_index(partition), name.encode(), b"")\n',
        "        except KeyNotFoundError:\n            pass\n",
        ("tests/interleavings/test_visible_branches.py",),
    ),
    Mutation(
        "scale33-branches-deletion-unindexes",
        "issue 33 item 5: a deleted branch leaves the visible index",
        "kvlake/graveler/refs/store.py",
        "        self._visible.remove(partition_of(repository), name)\n",
        "",
        (
            "tests/graveler/test_visible_branches.py::test_a_deleted_br"
            "anch_leaves_the_index_and_a_stale_key_is_dropped_when_met",
        ),
    ),
    Mutation(
        "scale33-branches-unindex-restores-a-raced-creation",
        "issue 33 item 5: a deletion that raced a creation of the name puts the key back",
        "kvlake/graveler/refs/visible.py",
        "        if not decode_branch(raw).hidden:\n"
        '            self._store.set(_index(partition), name.encode(), b"")\n',
        "        if False:\n            pass\n",
        (
            "tests/graveler/test_visible_branches.py::test_a_creat"
            "ion_racing_a_deletion_of_the_same_name_keeps_its_key",
        ),
    ),
    Mutation(
        "scale33-branches-listing-drops-a-stale-key",
        "issue 33 item 5: a listing drops a key naming no visible branch",
        "kvlake/graveler/refs/visible.py",
        "                self.remove(partition, name)\n",
        "                pass\n",
        (
            "tests/graveler/test_visible_branches.py::test_a_deleted_br"
            "anch_leaves_the_index_and_a_stale_key_is_dropped_when_met",
        ),
    ),
    Mutation(
        "scale33-branches-old-repository-builds-the-index",
        "issue 33 item 5: a repository written before the visible index gets it built",
        "kvlake/graveler/refs/visible.py",
        "                    if not decode_branch(raw).hidden:\n",
        "                    if False:\n",
        (
            "tests/graveler/test_visible_branches.py::test_a_reposit"
            "ory_written_before_the_index_gets_it_on_first_listing",
        ),
    ),
    Mutation(
        "scale33-indexes-dropped-with-the-instance",
        "issue 33 item 5: the cleaner drops an instance's index partitions with it",
        "kvlake/graveler/lifecycle/cleaner.py",
        "        self._store.drop_partition(keys.visible_branches_partition(name, instance_uid))\n",
        "",
        (
            "tests/graveler/test_crashes.py"
            "::test_crash_during_delete_leaves_repository_whole_or_gone_and_cleaner_removes_all",
        ),
    ),
    # -- issue 33, items 3 and 6 (scale3) ---------------------------------------------
    Mutation(
        "scale3-token-drop-reads-its-branch",
        "issue 33 item 3: a cleaner pass reads the branch each token was queued from, not all",
        "kvlake/graveler/lifecycle/cleaner.py",
        "        if any(not entry.branch for _, entry in entries):\n",
        "        if True:\n",
        (
            "tests/deletion/test_scale.py::"
            "test_a_cleaner_pass_reads_the_branches_its_tokens_were_queued_from_not_every_branch",
        ),
    ),
    Mutation(
        "scale3-token-drop-checks-its-branch",
        "invariant 2: a token its branch still names (staging or sealed) is never dropped",
        "kvlake/graveler/lifecycle/cleaner.py",
        "            referenced.update(branch.tokens())\n",
        "            referenced.add(branch.staging_token)\n",
        (
            "tests/graveler/test_cleaner_hooks.py::"
            "test_a_token_queued_from_its_branch_while_the_branch_names_it_is_kept",
        ),
    ),
    Mutation(
        "scale3-token-drop-queued-with-branch",
        "issue 33 item 3: a deleted branch's tokens are queued naming the branch",
        "kvlake/graveler/graveler.py",
        "        self.queue_token_drops(repository, branch.tokens(), branch=name)\n",
        "        self.queue_token_drops(repository, branch.tokens())\n",
        (
            "tests/deletion/test_scale.py::"
            "test_a_cleaner_pass_reads_the_branches_its_tokens_were_queued_from_not_every_branch",
        ),
    ),
    Mutation(
        "scale3-old-token-entries-scan-branches",
        "invariant 2: an entry queued without its branch is checked against every branch",
        "kvlake/graveler/lifecycle/cleaner.py",
        "            referenced |= staging | sealed\n",
        "            pass\n",
        (
            "tests/graveler/test_cleaner_hooks.py::"
            "test_a_token_queued_while_a_branch_still_names_it_is_kept_and_nothing_logged",
        ),
    ),
    Mutation(
        "scale3-orphan-notes-batched",
        "issue 33 item 6: a sweep writes its new notes a batch at a time, not one per orphan",
        "kvlake/graveler/lifecycle/orphans.py",
        "        self._store.set_many(keys.ORPHANS, fresh)\n",
        "        [self._store.set(keys.ORPHANS, key, at) for key, at in fresh]\n",
        (
            "tests/graveler/test_orphans.py::"
            "test_a_sweeps_round_trips_do_not_grow_with_the_orphans_it_notes_and_drops",
        ),
    ),
    Mutation(
        "scale3-orphan-sweep-cursor-kept",
        "issue 33 item 6: a sweep's slice cursor outlives the process (kept in the KV)",
        "kvlake/graveler/lifecycle/orphans.py",
        "            self._store.set(keys.SWEEP, keys.SWEEP_CURSOR, last)\n",
        "            pass\n",
        (
            "tests/graveler/test_orphans.py::"
            "test_a_sweep_in_a_new_process_goes_on_where_the_last_sweep_stopped",
        ),
    ),
    Mutation(
        "scale33-sweep-reads-its-slices-drops",
        "issue 33 item 6: a sweep reads the queued drops of its slice's tokens only",
        "kvlake/graveler/lifecycle/orphans.py",
        "        index = self._store.get_many(keys.DROPPED_BY_TOKEN, sorted(tokens))\n",
        "        index = {keys.dropped_token_of(k).encode(): k for k,"
        " _ in self._store.scan(keys.DROPPED_TOKENS)}\n",
        (
            "tests/graveler/test_orphans.py::"
            "test_a_sweep_reads_as_many_rows_beside_10_or_2000_queued_drops",
        ),
    ),
    Mutation(
        "scale33-sweep-drops-indexed-when-queued",
        "issue 33 item 6: a queued token is found by its index entry",
        "kvlake/graveler/graveler.py",
        "        self.store.set_many(keys.DROPPED_BY_TOKEN, by_token)\n",
        "",
        (
            "tests/graveler/test_orphans.py::"
            "test_a_token_queued_after_the_index_was_built_is_never_swept",
        ),
    ),
    Mutation(
        "scale33-sweep-index-confirmed-by-queue",
        "issue 33 item 6: an index entry without its queue entry counts for nothing",
        "kvlake/graveler/lifecycle/orphans.py",
        "            if key in present:\n",
        "            if True:\n",
        (
            "tests/graveler/test_orphans.py::"
            "test_an_index_entry_without_its_queue_entry_counts_for_nothing_and_goes",
        ),
    ),
    Mutation(
        "scale33-sweep-stale-index-entry-goes",
        "issue 33 item 6: an index entry a crash left goes once long past due",
        "kvlake/graveler/lifecycle/orphans.py",
        "                self._store.delete_if(keys.DROPPED_BY_TOKEN, token, key)\n",
        "                pass\n",
        (
            "tests/graveler/test_orphans.py::"
            "test_an_index_entry_without_its_queue_entry_counts_for_nothing_and_goes",
        ),
    ),
    Mutation(
        "scale33-sweep-older-drops-indexed",
        "issue 33 item 6: drops queued before the index are indexed",
        "kvlake/graveler/lifecycle/orphans.py",
        "            with self._store.scan(keys.DROPPED_TOKENS"
        ") as scan:\n                self._store.set_many(\n",
        "            with self._store.scan(keys.DROPPED_TOKE"
        "NS) as scan:\n                (lambda *a: None)(\n",
        (
            "tests/graveler/test_orphans.py::"
            "test_drops_queued_before_the_index_are_indexed_once_and_never_swept",
        ),
    ),
    Mutation(
        "scale33-sweep-older-drops-indexed-once",
        "issue 33 item 6: the older drops are indexed once per store",
        "kvlake/graveler/lifecycle/orphans.py",
        "        if not built:\n",
        "        if True:\n",
        (
            "tests/graveler/test_orphans.py::"
            "test_drops_queued_before_the_index_are_indexed_once_and_never_swept",
        ),
    ),
    Mutation(
        "scale33-cleaner-unindexes-its-entry-only",
        "issue 33 item 6: settling a queue entry keeps a newer index entry of its token",
        "kvlake/graveler/lifecycle/cleaner.py",
        "                    self._store.delete_if(keys.DROPPED_BY_TOKEN,"
        " entry.token.encode(), key)\n",
        "                    self._store.delete(keys.DROPPED_BY_TOKEN, entry.token.encode())\n",
        (
            "tests/graveler/test_orphans.py::"
            "test_dropping_an_older_queue_entry_keeps_the_newer_index_entry",
        ),
    ),
    Mutation(
        "scale33-cleaner-unindexes-settled-drops",
        "issue 33 item 6: a settled queue entry's index entry goes",
        "kvlake/graveler/lifecycle/cleaner.py",
        "                    self._store.delete_if(keys.DROPPED_BY_TOKEN,"
        " entry.token.encode(), key)\n",
        "",
        (
            "tests/graveler/test_orphans.py::"
            "test_dropping_an_older_queue_entry_keeps_the_newer_index_entry",
        ),
    ),
    Mutation(
        "scale33-sweep-slice-setting",
        "issue 33 item 6: KVLAKE_CLEANER_SWEEP_SLICE sizes the lake's sweeps",
        "kvlake/lake.py",
        "            sweep_slice=self.settings.cleaner.sweep_slice,\n",
        "",
        ("tests/graveler/test_orphans.py::test_the_sweep_slice_setting_reaches_the_lakes_cleaner",),
    ),
    Mutation(
        "scale33-tombstone-grace-setting",
        "issue 33 item 5: KVLAKE_CLEANER_TOMBSTONE_GRACE sets the lake's tombstone grace",
        "kvlake/lake.py",
        "            tombstone_grace=self.settings.cleaner.tombstone_grace,\n",
        "",
        (
            "tests/graveler/test_tombstones.py::"
            "test_the_tombstone_grace_setting_reaches_the_lakes_cleaner",
        ),
    ),
    Mutation(
        "scale3-commit-queues-with-branch",
        "issue 33 item 3: a commit queues the tokens it published naming its branch",
        "kvlake/graveler/history/commits.py",
        "            ours = [t for t in mine if t in branch.sealed_tokens]\n"
        "            self._drop_tokens(repository, ours, branch=branch_name)\n",
        "            ours = [t for t in mine if t in branch.sealed_tokens]\n"
        '            self._drop_tokens(repository, ours, branch="")\n',
        (
            "tests/graveler/test_cleaner_hooks.py::"
            "test_tokens_a_branch_stops_naming_are_queued_naming_that_branch",
        ),
    ),
    Mutation(
        "scale3-reset-queues-with-branch",
        "issue 33 item 3: a reset queues the tokens it drops naming its branch",
        "kvlake/graveler/history/reset.py",
        "            self._drop_tokens(repository, branch.tokens(), branch=name)\n",
        '            self._drop_tokens(repository, branch.tokens(), branch="")\n',
        (
            "tests/graveler/test_cleaner_hooks.py::"
            "test_tokens_a_branch_stops_naming_are_queued_naming_that_branch",
        ),
    ),
    Mutation(
        "actions30-post-operation-event",
        "issue 30: a finished bulk delete or GC run queues its post-event (post-bulk-delete,"
        " post-gc-run)",
        "kvlake/operations/runner.py",
        "                self._announce(operation)\n",
        "                pass\n",
        (
            "tests/actions/test_operation_events.py::"
            "test_a_finished_bulk_delete_queues_one_post_event_run_by_the_actions_pass",
            "tests/actions/test_operation_events.py::"
            "test_a_finished_gc_run_queues_post_gc_run_read_at_the_default_branch",
        ),
    ),
    Mutation(
        "actions30-post-operation-event-key",
        "issue 30: an operation's post-event is queued under one key, so it runs once",
        "kvlake/operations/runner.py",
        'key=f"{event.event_type}/{operation.id}"',
        "key=ids.new_uid()",
        (
            "tests/actions/test_operation_events.py::test_a_pos"
            "t_event_queued_twice_for_one_operation_runs_once",
        ),
    ),
    Mutation(
        "actions30-post-queue-put-once",
        "issue 30: queuing a post-event again while it runs keeps the running claim",
        "kvlake/actions/queue.py",
        "            self._store.set_if(PARTITION, key.encode(), _encode(pending), None)\n",
        "            self._store.set(PARTITION, key.encode(), _encode(pending))\n",
        (
            "tests/actions/test_operation_events.py::test_a_post_ev"
            "ent_queued_again_while_it_runs_is_left_to_its_runner",
        ),
    ),
    Mutation(
        "actions30-post-operation-event-instance",
        "issue 30 / invariant 1: an old instance's operation runs no hooks of a new one",
        "kvlake/operations/runner.py",
        "        if repository.instance_uid != operation.instance_uid:\n",
        "        if False:\n",
        (
            "tests/actions/test_operation_events.py::test_an_oper"
            "ation_of_a_repository_created_again_queues_nothing",
        ),
    ),
    Mutation(
        "actions30-pre-bulk-delete-prefix",
        "issue 30: the pre-bulk-delete payload carries the prefix, so a hook refuses by path",
        "kvlake/operations/events.py",
        '    return {"prefix": prefix, ',
        '    return {"prefix": "", ',
        (
            "tests/actions/test_bulk_delete_hooks.py"
            "::test_a_pre_bulk_delete_hook_refuses_by_prefix_and_filters",
        ),
    ),
    Mutation(
        "actions30-payload-lakefs-fields-win",
        "issue 30: kvlake's extra payload never replaces a lakeFS field",
        "kvlake/actions/payload.py",
        "    return {**event.extra, **fields}\n",
        "    return {**fields, **event.extra}\n",
        (
            "tests/actions/test_payload.py"
            "::test_kvlake_fields_sit_beside_lakefs_fields_and_never_replace_them",
        ),
    ),
    Mutation(
        "actions30-gc-event-has-no-branch",
        "issue 30: 'branches' on post-gc-run (a repository's event) fails validation",
        "kvlake/actions/parsing.py",
        "                if branches and event in REPOSITORY_EVENT_TYPES:\n",
        "                if False:\n",
        ("tests/actions/test_parsing.py::test_bad_files_name_file_and_line",),
    ),
    Mutation(
        "actions30-cleaner-instance-cleanups",
        "issue 30: the cleaner runs the instance clean-ups layers above gave it",
        "kvlake/graveler/lifecycle/cleaner.py",
        "                    cleanup(entry)\n",
        "                    pass\n",
        (
            "tests/actions/test_cleanup.py::test_the_cleaner_d"
            "rops_a_deleted_instances_runs_and_queued_events",
        ),
    ),
    Mutation(
        "actions30-cleaner-drops-runs",
        "issue 30: a deleted repository instance's action runs are dropped",
        "kvlake/actions/runs.py",
        "        self._store.drop_partition(_PARTITION_PREFIX + instance_uid.encode())\n",
        "        pass\n",
        (
            "tests/actions/test_cleanup.py::test_the_cleaner_d"
            "rops_a_deleted_instances_runs_and_queued_events",
        ),
    ),
    Mutation(
        "actions30-cleaner-drops-queued-posts",
        "issue 30: a deleted repository instance's queued post-events are dropped",
        "kvlake/actions/queue.py",
        "        for key in gone:\n            self._store.delete(PARTITION, key)\n",
        "        for key in gone:\n            pass\n",
        (
            "tests/actions/test_cleanup.py::test_the_cleaner_d"
            "rops_a_deleted_instances_runs_and_queued_events",
        ),
    ),
    Mutation(
        "actions30-lake-wires-runs-cleanup",
        "issue 30: the lake's cleaner drops action runs (wiring)",
        "kvlake/lake.py",
        "            instance_cleanups=(lambda entry: actions.drop_instance(entry.instance_uid),)"
        ",\n",
        "            instance_cleanups=(),\n",
        (
            "tests/actions/test_cleanup.py::test_the_cleaner_d"
            "rops_a_deleted_instances_runs_and_queued_events",
        ),
    ),
    Mutation(
        "actions30-lua-time-sleep-deadline",
        "issue 30: a Lua hook's time.sleep never sleeps past the hook's deadline",
        "kvlake/actions/lua_time.py",
        "        time.sleep(max(0.0, min(nanos / 1e9, remaining() + 0.01)))\n",
        "        time.sleep(max(0.0, nanos / 1e9))\n",
        ("tests/actions/test_lua_time.py::test_sleep_ends_at_the_hooks_deadline",),
    ),
    Mutation(
        "actions30-lua-yaml-alias-bound",
        "issue 30: a YAML document expanding without bound through aliases fails the hook",
        "kvlake/actions/lua_codecs.py",
        "        _count_nodes(loaded, [MAX_YAML_NODES])\n",
        "        pass\n",
        ("tests/actions/test_lua_codecs.py::test_the_yaml_bound_counts_expanded_values",),
    ),
    Mutation(
        "actions30-lua-yaml-dates-as-text",
        "issue 30: YAML timestamps reach Lua as text (no Python object in a Lua table)",
        "kvlake/actions/lua_codecs.py",
        'if tag != "tag:yaml.org,2002:timestamp"]',
        "if True]",
        (
            "tests/actions/test_lua_codecs.py"
            "::test_yaml_marshals_as_yaml_v3_and_reads_dates_as_text",
        ),
    ),
    Mutation(
        "actions30-lua-z85-illegal-character",
        "issue 30 / invariant 6: a bad Z85 text fails the hook naming the character",
        "kvlake/actions/lua_codecs.py",
        "            if char not in _Z85_VALUE:\n",
        "            if False:\n",
        ("tests/actions/test_lua_codecs.py::test_z85_decodes_rfc_32s_example_and_lakefs_uuids",),
    ),
    # -- issue 26: lakeFS's GC commits preparation on the driver; one `drive` for steps kinds
    Mutation(
        "ops3-gc-prepare-refuses-without-rules",
        "issue 26: an async commits preparation of a repository without GC rules is 404 at"
        " submit, nothing recorded (lakeFS's client keeps every commit on it)",
        "kvlake/catalog/gc_prepare_runs.py",
        "    preparation.check_rules(repository)\n",
        "",
        ("tests/api/test_gc_prepare.py::test_bad_input_is_answered_as_lakefs_answers_it",),
    ),
    Mutation(
        "ops3-gc-prepare-run-id-is-the-operation",
        "issue 26: the status names the CSV the runner wrote, from the record alone",
        "kvlake/catalog/gc_prepare_runs.py",
        "        self._preparation.prepare_commits(repository, run_id=operation.id)\n",
        "        self._preparation.prepare_commits(repository)\n",
        (
            "tests/api/test_gc_prepare.py::"
            "test_the_async_preparation_runs_on_the_runner_and_resumes_after_its_death",
        ),
    ),
    Mutation(
        "ops3-task-status-checks-the-kind",
        "issue 26: a task's status call answers only for its own kind's records",
        "kvlake/operations/tasks.py",
        "        or operation.kind != kind\n",
        "",
        ("tests/api/test_dump_tasks.py::test_unknown_tasks_are_404",),
    ),
    Mutation(
        "ops3-task-status-cancelled-reads-an-error",
        "issue 26: a cancelled task reads done with an error, never as a result",
        "kvlake/operations/tasks.py",
        '    if operation.status == "cancelled" and not error:\n',
        "    if False:\n",
        (
            "tests/api/test_gc_prepare.py::"
            "test_a_cancelled_preparation_reads_done_with_an_error_and_writes_nothing",
        ),
    ),
    Mutation(
        "ops3-drive-honours-an-early-cancel",
        "issue 26: a record cancelled before its work began is ended cancelled, work not run",
        "kvlake/operations/steps.py",
        "    if operation.cancel_requested:\n"
        '        return driver.finish(operation_id, "cancelled")\n',
        "",
        (
            "tests/operations/test_steps.py::"
            "test_a_record_held_finished_or_cancelled_before_the_work_runs_no_steps",
        ),
    ),
    Mutation(
        "ops3-drive-hides-internal-errors",
        "issue 26: an unexpected failure is recorded without its details (they go to the log)",
        "kvlake/operations/steps.py",
        "    except KvlakeError as exc:  # said as is in the record: a missing dump, a refused"
        " publish\n",
        "    except Exception as exc:  # every failure's text in the record\n",
        ("tests/operations/test_steps.py::test_the_steps_outcome_ends_the_record",),
    ),
    Mutation(
        "ops3-drive-leaves-a-lost-record",
        "issue 26: a holder that lost its lease or is stopping never ends the record",
        "kvlake/operations/steps.py",
        "    except (Stopped, LostLeaseError):\n",
        "    except ():\n",
        (
            "tests/operations/test_steps.py::"
            "test_a_stop_or_a_lost_lease_leaves_the_record_to_the_next_holder",
        ),
    ),
    Mutation(
        "lead26-overlapped-range-goes-key-by-key",
        "issue 26: a range tombstone another record overlaps is not dropped whole",
        "kvlake/graveler/staging/store.py",
        "                or index in overlapped\n",
        "",
        (
            "tests/cli/test_operator.py::test_repo_untang"
            "le_range_tombstones_repairs_a_wedged_branch",
        ),
    ),
    Mutation(
        "lead26-narrow-record-goes-key-by-key",
        "issue 26: a range tombstone narrower than its range is not dropped whole",
        "kvlake/graveler/staging/store.py",
        "                or (record.min_key, record.max_key) != (info.min_key, info.max_key)\n",
        "",
        (
            "tests/graveler/test_range_tombstones.py::test_a_r"
            "ecord_hides_its_ranges_keys_inside_its_span_only",
        ),
    ),
    Mutation(
        "kv-update-guarded-write",
        "every read-modify-write lands only on the value it read (kvlake/kv/updates.py)",
        "kvlake/kv/updates.py",
        "            store.set_if(partition, key, wanted, predicate)\n",
        "            store.set(partition, key, wanted)\n",
        (
            "tests/kv/test_updates.py::test_a_lost_race_ap"
            "plies_the_change_again_to_the_winners_value",
        ),
    ),
    Mutation(
        "kv-sqlite-wal-switch-retried",
        "processes opening one new SQLite file together all open it (kvlake/kv/sqlite.py)",
        "kvlake/kv/sqlite.py",
        "                if not busy or time.monotonic() > deadline:\n",
        "                if True:\n",
        (
            "tests/kv/test_sqlite.py::test_opening_a_new_file_"
            "another_process_is_switching_to_wal_waits_for_it",
        ),
    ),
    Mutation(
        "kv-sqlite-group-acknowledged-after-commit",
        "issue 28: a write in a group commit returns only after its transaction committed",
        "kvlake/kv/group_commit.py",
        "            self._commit(group)\n",
        "            self._acknowledge(group)\n            self._commit(group)\n",
        (
            "tests/kv/test_group_commit.py"
            "::test_concurrent_writes_commit_as_one_group_each_with_its_own_outcome",
        ),
    ),
    Mutation(
        "kv-sqlite-close-waits-for-calls",
        "a store closed while another thread's call runs waits for it (sqlite3 would crash)",
        "kvlake/kv/sqlite.py",
        "        with self.lock:\n            self.connection.close()\n",
        "        self.connection.close()\n",
        ("tests/kv/test_sqlite.py::test_close_waits_for_a_call_in_flight_on_another_thread",),
    ),
    Mutation(
        "compare-commits-runs-in-each-tree",
        "issue 28's regression check: each side runs in its own tree's folder, so servers"
        " started with `python -m kvlake` import that tree (the folder comes before PYTHONPATH)",
        "benchmarks/compare_commits.py",
        "        cwd=tree,\n",
        "",
        ("tests/test_compare_commits.py::test_each_tree_runs_its_own_code_in_alternating_order",),
    ),
    Mutation(
        "kv-postgres-loop-has-its-own-connection",
        "issue 28: a call on an event loop (an inline stat) uses the loop's own connection,"
        " never waiting for the pool that request threads hold",
        "kvlake/kv/postgres.py",
        "        if _get_running_loop() is not None:\n",
        "        if False:\n",
        ("tests/kv/test_postgres.py::test_a_call_on_an_event_loop_never_waits_for_the_pool",),
    ),
    Mutation(
        "kv-postgres-loop-connection-closed-with-the-store",
        "issue 28: closing the store closes its event loops' connections too",
        "kvlake/kv/postgres.py",
        "        for ident in list(self._loop_connections):\n",
        "        for ident in []:\n",
        ("tests/kv/test_postgres.py::test_closing_the_store_closes_its_connections",),
    ),
    Mutation(
        "kv-postgres-loop-connection-opened-while-closing-is-closed",
        "issue 28: a loop's connection opened while the store closes is closed, not leaked",
        "kvlake/kv/postgres.py",
        "        if self._closed:  # closed while connecting: close() may have missed it\n"
        "            self._drop_loop_connection(ident)\n",
        "        if self._closed:  # closed while connecting: close() may have missed it\n",
        (
            "tests/kv/test_postgres.py::"
            "test_a_loop_connecting_while_the_store_closes_leaves_no_connection_open",
        ),
    ),
    Mutation(
        "kv-postgres-on-this-machine-only-loopback",
        "issue 28: only a Unix socket or a loopback address counts as a PostgreSQL on this"
        " machine (a server elsewhere is never waited for on the event loop)",
        "kvlake/kv/postgres.py",
        "        return ipaddress.ip_address(address).is_loopback\n",
        "        return bool(ipaddress.ip_address(address))\n",
        (
            "tests/kv/test_postgres.py::"
            "test_a_server_counts_as_on_this_machine_only_over_a_socket_or_loopback",
        ),
    ),
    Mutation(
        "kv-sqlite-group-reruns-after-rollback",
        "issue 28: a statement that rolls back its group's transaction fails only its caller",
        "kvlake/kv/sqlite.py",
        "                            return group[:index] + group[index + 1 :]\n",
        "                            return []\n",
        (
            "tests/kv/test_group_commit.py"
            "::test_a_statement_sqlite_refuses_fails_only_its_own_caller",
        ),
    ),
    Mutation(
        "read-branch-instance-uid-checked",
        "issue 28: keys read beside the record count only for the uid the record names",
        "kvlake/graveler/lifecycle/repositories.py",
        '                if repository.state == "active" and repository.instance_uid == uid:\n',
        '                if repository.state == "active":\n',
        (
            "tests/graveler/test_branch_reads.py::"
            "test_a_name_recreated_by_another_process_is_read_from_its_new_instance",
        ),
    ),
    Mutation(
        "stat-guess-checked-against-branch",
        "issue 28: a stat's staged entry read in remembered tokens counts only if the branch"
        " read in the same statement names exactly those tokens",
        "kvlake/graveler/refs/branch_reads.py",
        "        if staged is not None and (branch is None or branch.tokens() != staged.tokens):\n",
        "        if staged is not None and branch is None:\n",
        ("tests/graveler/test_branch_reads.py::test_a_guess_for_other_tokens_is_not_used",),
    ),
    Mutation(
        "stat-guess-same-key-and-tokens",
        "issue 28: a stat uses the entry read with the branch only for its path and tokens",
        "kvlake/graveler/refs/branch_reads.py",
        "        if staged is None or staged.key != key or staged.tokens != tokens:\n",
        "        if staged is None:\n",
        ("tests/graveler/test_branch_reads.py::test_a_guess_for_other_tokens_is_not_used",),
    ),
    Mutation(
        "reqpath28-inline-only-a-cached-caller",
        "issue 28: an inline read runs on the event loop only for a caller already in the"
        " authenticator's cache (a fresh check may write a failure down)",
        "kvlake/api/routing.py",
        "    return operation.public or _known_caller(call)\n",
        "    _known_caller(call)\n    return True\n",
        (
            "tests/api/test_inline_reads.py::test_a_known_caller_reads_on_the_loop_after_its_first_check",
            "tests/api/test_inline_reads.py::test_a_wrong_secret_is_never_checked_on_the_loop",
        ),
    ),
    Mutation(
        "reqpath28-known-caller-skips-the-authentication-hop",
        "issue 28: a JSON operation's caller in the authenticator's cache is known on the"
        " loop, without a thread's hop before its body is read",
        "kvlake/api/routing.py",
        "        elif not operation.public and not _known_caller(call):\n",
        "        elif not operation.public:\n",
        (
            "tests/api/test_inline_reads.py::"
            "test_a_known_caller_s_json_operation_needs_no_thread_to_authenticate",
        ),
    ),
    Mutation(
        "reqpath28-inline-only-over-in-process-stores",
        "issue 28: inline reads run on the event loop only when the KV and the blockstore"
        " answer in-process (never wait on PostgreSQL or S3 there)",
        "kvlake/api/app.py",
        "    return local_kv and url_scheme(settings.blockstore_url) in IN_PROCESS_BLOCKS\n",
        "    return local_kv or url_scheme(settings.blockstore_url) in IN_PROCESS_BLOCKS\n",
        ("tests/api/test_inline_reads.py::test_reads_run_inline_only_over_stores_on_this_machine",),
    ),
    Mutation(
        "reqpath28-inline-needs-the-executor-s-say",
        "issue 28: a read declared inline still takes a thread unless the process's executors"
        " allow it",
        "kvlake/api/routing.py",
        "                and executors.inline\n",
        "",
        (
            "tests/api/test_inline_reads.py::test_without_in_process_stores_every_read_takes_a_thread",
        ),
    ),
)


def copy_tree(destination: Path) -> None:
    """The tracked and untracked (not ignored) files, as the working tree has them."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    for raw in filter(None, listed):
        source = ROOT / raw.decode()
        if source.is_file():
            target = destination / raw.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def run_tests(tree: Path, tests: tuple[str, ...], python: str) -> int:
    """pytest's exit status for `tests` in `tree`: 0 passed, 1 failed, other: not run."""
    # `python -m pytest` puts the copy first on sys.path, ahead of the editable install;
    # PYTHONPATH does the same for the processes tests start (servers, Spark's workers).
    command = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(tree)}
    return subprocess.run(command, cwd=tree, capture_output=True, env=environment).returncode


def control(mutations: list[Mutation], python: str) -> bool:
    """Whether every named test passes unmutated: else a 'kill' would prove nothing."""
    with tempfile.TemporaryDirectory(prefix="kvlake-mutation-") as folder:
        copy_tree(Path(folder))
        tests = tuple(dict.fromkeys(test for m in mutations for test in m.tests))
        return run_tests(Path(folder), tests, python) == 0


def run(mutation: Mutation, python: str) -> tuple[str, float]:
    """'killed', 'SURVIVED', 'BROKEN' (the mutated tree does not collect) or 'STALE'
    (the guarded code is not where the entry says)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kvlake-mutation-") as folder:
        tree = Path(folder)
        copy_tree(tree)
        target = tree / mutation.path
        text = target.read_text()
        if text.count(mutation.old) != 1:
            return "STALE", time.monotonic() - started
        target.write_text(text.replace(mutation.old, mutation.new))
        status = run_tests(tree, mutation.tests, python)
        # Anything but 0 or 1: the mutated tree did not even collect (a broken entry).
        outcome = {0: "SURVIVED", 1: "killed"}.get(status, "BROKEN")
    return outcome, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="run only mutations whose name contains this")
    parser.add_argument(
        "--path", default="", help="run only mutations of files whose path starts with this"
    )
    args = parser.parse_args()
    python = str(ROOT / ".venv" / "bin" / "python")
    if not Path(python).exists():
        python = sys.executable
    chosen = [m for m in MUTATIONS if args.k in m.name and m.path.startswith(args.path)]
    if not chosen:
        # With no entry, the control run would get no test paths: pytest would run everything.
        print(f"no mutation matches -k {args.k!r} --path {args.path!r}: see MUTATIONS")
        return 2
    if not control(chosen, python):
        print("the named tests fail on the unmutated tree: fix them first")
        return 1
    print("control: every named test passes on the unmutated tree", flush=True)
    failures = 0
    for mutation in chosen:
        outcome, seconds = run(mutation, python)
        failures += outcome != "killed"
        print(f"{outcome:8} {mutation.name:40} {seconds:5.1f} s  {mutation.guards}", flush=True)
    print(f"{len(chosen) - failures} of {len(chosen)} mutations killed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
