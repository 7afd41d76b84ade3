"""The throwaway servers of tests/support/servers.py: each test gets a database of its own."""

from __future__ import annotations

import asyncpg
from support.servers import PostgresServer, RedisServer


async def test_each_test_gets_its_own_empty_postgres_database(
    postgres: PostgresServer, postgres_url: str
) -> None:
    conn = await asyncpg.connect(postgres_url)
    try:
        await conn.execute("CREATE TABLE mine (x int)")
        assert await conn.fetchval("SELECT current_database()") == postgres_url.rsplit("/", 1)[1]
    finally:
        await conn.close()
    other = await asyncpg.connect(postgres.create_database())
    try:
        assert await other.fetchval("SELECT to_regclass('mine')") is None
    finally:
        await other.close()


async def test_a_postgres_server_restarted_keeps_its_data(
    postgres: PostgresServer, postgres_url: str
) -> None:
    conn = await asyncpg.connect(postgres_url)
    await conn.execute("CREATE TABLE kept AS SELECT 7 AS x")
    postgres.stop("immediate")  # as a crash: the connection dies with it
    postgres.start()
    assert conn.is_closed() or not await _alive(conn)
    conn = await asyncpg.connect(postgres_url)
    try:
        assert await conn.fetchval("SELECT x FROM kept") == 7
    finally:
        await conn.close()


async def _alive(conn: asyncpg.Connection) -> bool:
    try:
        await conn.fetchval("SELECT 1")
    except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError):
        return False
    return True


def test_each_test_gets_its_own_redis_database(redis: RedisServer, redis_url: str) -> None:
    db = int(redis_url.rsplit("/", 1)[1])
    assert redis.command("SET", "k", "v", db=db) == b"+OK"
    assert redis.command("DBSIZE", db=db) == b":1"
    assert redis.command("DBSIZE", db=int(redis.fresh().rsplit("/", 1)[1])) == b":0"
