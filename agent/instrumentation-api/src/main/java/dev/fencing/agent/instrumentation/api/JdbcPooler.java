package dev.fencing.agent.instrumentation.api;

/** fencing.jdbc.pooler: how a PostgreSQL session is made to carry the token. */
public enum JdbcPooler {
  AUTO, TRANSACTION, SESSION
}
