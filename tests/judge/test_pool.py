"""The run's judge pool: one client per distinct judge, the default one kept at hand."""

from __future__ import annotations

import asyncio

import pytest

from assay.judge import JudgePool, JudgeSpec, NoJudgeError


def test_graders_share_one_client_per_judge_and_close_ends_them() -> None:
    async def main() -> None:
        pool = JudgePool(JudgeSpec(model="judge-a", base_url="http://127.0.0.1:9", api_key_env=""))
        default = pool.client()
        assert pool.client() is default and pool.client(None) is default
        assert pool.client(JudgeSpec(model="judge-a")) is default  # the same settings merged
        other = pool.client(JudgeSpec(model="judge-b"))
        assert other is not default and pool.client(JudgeSpec(model="judge-b")) is other
        await pool.close()
        assert pool.client() is not default  # a closed client is never handed out again
        await pool.close()

    asyncio.run(main())


def test_a_pool_without_a_model_has_no_default_client() -> None:
    with pytest.raises(NoJudgeError, match="--judge-model"):
        JudgePool().client()
