"""Issue 22 item 10: a run records the process that runs it, so a resume claims a run whose
process on this host is gone (killed, or its pid now another process's) without
`--takeover`, and refuses one whose process is alive, elsewhere or unknown."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, create_engine, inspect, select, text, update
from sqlalchemy.engine.interfaces import ReflectedColumn

from assay.errors import UsageError
from assay.results import CaseResult, RunResult
from assay.store import ConflictError, RunFinish, RunOwner, SQLStore, open_store
from assay.store._tables import runs

MakeRun = Callable[..., RunResult]
MakeCase = Callable[..., CaseResult]

MIGRATIONS = Path(__file__).resolve().parents[2] / "src" / "assay" / "store" / "migrations"


def _set_owner(store: SQLStore, run_id: str, owner: RunOwner | None) -> None:
    with store.engine.begin() as conn:
        conn.execute(
            update(runs)
            .where(runs.c.id == run_id)
            .values(owner=None if owner is None else owner.encode())
        )


def _reused_pid() -> RunOwner:
    """An owner whose pid is a live process (this one) started at another time: the pid
    was freed by a killed run and reused."""
    me = RunOwner.current()
    assert me.start_ticks is not None
    return dataclasses.replace(me, start_ticks=me.start_ticks - 1)


def test_i22_10_this_process_is_alive_and_a_reaped_or_zombie_one_is_gone() -> None:
    me = RunOwner.current()
    assert (me.host, me.pid) == (socket.gethostname(), os.getpid())
    assert me.state() == "alive"
    assert RunOwner.decode(me.encode()) == me
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    owner = dataclasses.replace(me, pid=child.pid, start_ticks=None)
    assert owner.state() == "alive"
    child.kill()
    deadline = time.monotonic() + 30
    while owner.state() != "gone" and time.monotonic() < deadline:  # a zombie until reaped
        time.sleep(0.01)
    assert owner.state() == "gone"
    child.wait()
    assert owner.state() == "gone"
    assert _reused_pid().state() == "gone"
    assert dataclasses.replace(me, host="elsewhere").state() == "elsewhere"
    assert dataclasses.replace(me, space="another-boot/pid:[1]").state() == "elsewhere"
    assert RunOwner.decode(None) is None
    assert RunOwner.decode('{"host": 1}') is None


def _create_and_die(location: str, run_json: str) -> int:
    """Another process creates the run (it is the run's owner), then ends."""
    with open_store(location) as store:
        store.create_run(RunResult.model_validate_json(run_json), {})
    return os.getpid()


def test_i22_10_a_run_whose_process_ended_is_resumed_without_takeover(
    store: SQLStore, location: str, make_run: MakeRun
) -> None:
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        creator = pool.submit(_create_and_die, location, make_run("r1").model_dump_json())
        pid = creator.result()
    owner = store.run_owner("r1")
    assert owner is not None and owner.pid == pid  # the creating process, not this one
    assert owner.started_at is not None
    assert store.get_run("r1").status == "running"
    claimed = store.reopen_run("r1")
    assert claimed.status == "running"
    assert store.run_owner("r1") == RunOwner.current()


def test_i22_10_a_reused_pid_is_not_taken_for_the_runs_process(
    store: SQLStore, make_run: MakeRun
) -> None:
    store.create_run(make_run("r1"), {})
    _set_owner(store, "r1", _reused_pid())
    assert store.reopen_run("r1").status == "running"
    assert store.run_owner("r1") == RunOwner.current()


def test_i22_10_a_live_owner_is_refused_naming_its_process(
    store: SQLStore, make_run: MakeRun
) -> None:
    store.create_run(make_run("r1"), {})  # owned by this process, which is alive
    me = RunOwner.current()
    with pytest.raises(ConflictError) as refused:
        store.reopen_run("r1")
    assert str(refused.value) == (
        f"run 'r1' is running: pid {me.pid} on host '{me.host}' (started {me.started_at}) is "
        f"completing it. Wait for it to end, or end that process (kill {me.pid}) and resume "
        "again"
    )
    assert store.reopen_run("r1", takeover=True).status == "running"  # asked for explicitly


def test_i22_10_an_owner_on_another_host_or_unknown_needs_takeover(
    store: SQLStore, make_run: MakeRun
) -> None:
    store.create_run(make_run("r1"), {})
    other = RunOwner("build-7", 4242, "boot/pid:[1]", 99, "2026-11-27T06:00:00Z")
    _set_owner(store, "r1", other)
    with pytest.raises(ConflictError) as elsewhere:
        store.reopen_run("r1")
    assert str(elsewhere.value) == (
        "run 'r1' is running: pid 4242 on host 'build-7' (started 2026-11-27T06:00:00Z) is "
        "completing it, and a process on another host (or in another container, or before a "
        "restart) cannot be looked up from here. Wait for it to end; if that process is gone, "
        "take it over with: assay run --resume r1 --takeover"
    )
    _set_owner(store, "r1", None)  # stored by an assay that did not record its process
    with pytest.raises(ConflictError, match=r"does not say which process runs it.*--takeover"):
        store.reopen_run("r1")
    assert store.reopen_run("r1", takeover=True).status == "running"
    assert store.run_owner("r1") == RunOwner.current()


def _claim(location: str, run_id: str) -> str:
    with open_store(location) as store:
        try:
            store.reopen_run(run_id)
        except UsageError as exc:
            return str(exc)
    return f"claimed by {os.getpid()}"


def test_i22_10_of_resumes_racing_for_a_dead_run_exactly_one_claims_it(
    store: SQLStore, location: str, make_run: MakeRun
) -> None:
    store.create_run(make_run("r1"), {})
    _set_owner(store, "r1", _reused_pid())
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(6, mp_context=context) as pool:
        outcomes = list(pool.map(_claim, [location] * 6, ["r1"] * 6))
        (winner,) = [o for o in outcomes if o.startswith("claimed by ")]
        owner = store.run_owner("r1")
        assert owner is not None and f"claimed by {owner.pid}" == winner
        # Each loser found the winner, a live process, owning the run.
        losers = [o for o in outcomes if o != winner]
        assert len(losers) == 5
        assert all(o.startswith(f"run 'r1' is running: pid {owner.pid} ") for o in losers)


def test_i22_10_a_writer_left_behind_stores_nothing_once_the_run_is_claimed(
    store: SQLStore, make_run: MakeRun, make_case: MakeCase
) -> None:
    dead = _reused_pid()
    store.create_run(make_run("r1"), {}, owner=dead)  # as the killed run's writer did
    store.reopen_run("r1")
    with pytest.raises(ConflictError, match=r"run 'r1': it was taken over by pid "):
        store.add_case_documents("r1", [make_case("a").model_dump_json()], owner=dead)
    assert list(store.iter_case_scores("r1")) == []
    store.add_case_documents("r1", [make_case("a").model_dump_json()], owner=RunOwner.current())
    assert [s.case_id for s in store.iter_case_scores("r1")] == ["a"]


def test_i22_10_a_finished_run_keeps_no_owner(store: SQLStore, make_run: MakeRun) -> None:
    store.create_run(make_run("r1"), {})
    store.finish_run(
        "r1",
        RunFinish(
            status="interrupted",
            finished_at="2026-01-01T00:00:00Z",
            summary=store.get_run("r1").summary,
            duration_ms=1.0,
        ),
    )
    assert store.run_owner("r1") is None
    store.reopen_run("r1")
    assert store.run_owner("r1") == RunOwner.current()


def test_i22_10_a_store_of_revision_0004_gains_the_owner_column(
    location: str, db_path: Path, make_run: MakeRun
) -> None:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(location if "://" in location else f"sqlite:///{db_path}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0004")
    run = make_run("old")
    with engine.begin() as conn:  # a run an older assay left running
        conn.execute(
            text(
                "INSERT INTO runs (id, suite, target, status, started_at, config, summary, "
                "snapshot, duration_ms, assay_version) VALUES ('old', 's', 't', 'running', "
                ":at, :config, :summary, '{}', 0, '0.0.1')"
            ),
            {
                "at": run.started_at,
                "config": run.config.model_dump_json(),
                "summary": run.summary.model_dump_json(),
            },
        )
    engine.dispose()
    with open_store(location) as store:
        assert isinstance(store, SQLStore)
        with store.engine.connect() as conn:
            assert conn.execute(select(runs.c.owner)).scalar_one() is None
        assert store.run_owner("old") is None
        with pytest.raises(ConflictError, match="does not say which process runs it"):
            store.reopen_run("old")
        store.reopen_run("old", takeover=True)
        assert store.run_owner("old") == RunOwner.current()
    # Down again (SQLite copies the table to drop the column), and up.
    engine = create_engine(location if "://" in location else f"sqlite:///{db_path}")
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0004")
        assert "owner" not in [c["name"] for c in _columns(conn)]
        command.upgrade(config, "head")
        assert "owner" in [c["name"] for c in _columns(conn)]
    engine.dispose()


def _columns(conn: Connection) -> list[ReflectedColumn]:
    return list(inspect(conn).get_columns("runs"))


def test_i22_10_a_zombie_owner_counts_as_gone_for_a_resume(
    store: SQLStore, make_run: MakeRun
) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        me = RunOwner.current()
        ticks = _ticks(child.pid)
        store.create_run(make_run("r1"), {})
        _set_owner(store, "r1", dataclasses.replace(me, pid=child.pid, start_ticks=ticks))
        with pytest.raises(ConflictError, match=f"pid {child.pid} on host"):
            store.reopen_run("r1")
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while _state(child.pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _state(child.pid) == "Z"  # killed, not yet reaped: it writes nothing more
        assert store.reopen_run("r1").status == "running"
    finally:
        child.kill()
        child.wait()


def _stat(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rfind(")") + 2 :].split()


def _ticks(pid: int) -> int:
    return int(_stat(pid)[19])


def _state(pid: int) -> str:
    return _stat(pid)[0]
