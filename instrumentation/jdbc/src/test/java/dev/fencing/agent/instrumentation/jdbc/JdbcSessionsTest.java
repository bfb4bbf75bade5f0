package dev.fencing.agent.instrumentation.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.api.JdbcPooler;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** One session per physical connection, which a statement run on that connection finds again by identity. */
class JdbcSessionsTest {
  /** A connection to a database of no known dialect: the session is made without any query. */
  private static Connection connection() {
    DatabaseMetaData meta = (DatabaseMetaData) Proxy.newProxyInstance(JdbcSessionsTest.class.getClassLoader(),
        new Class<?>[] {DatabaseMetaData.class},
        (proxy, method, args) -> method.getName().equals("getURL") ? "jdbc:none:sessions" : null);
    return (Connection) Proxy.newProxyInstance(JdbcSessionsTest.class.getClassLoader(),
        new Class<?>[] {Connection.class}, (proxy, method, args) -> switch (method.getName()) {
          case "getMetaData" -> meta;
          case "isWrapperFor" -> false;
          case "hashCode" -> System.identityHashCode(proxy);
          case "equals" -> proxy == args[0];
          default -> null;
        });
  }

  @Test
  void aSessionKnowsItsConnection() throws Exception {
    JdbcSessions sessions = new JdbcSessions(List.of(), JdbcPooler.AUTO, -1, List.of());
    Connection a = connection();
    Connection b = connection();
    JdbcSession sa = sessions.of(a);
    assertThat(sessions.of(a)).isSameAs(sa);
    assertThat(sa.isOf(a)).isTrue();
    assertThat(sa.isOf(b)).isFalse();
    assertThat(sessions.of(b)).isNotSameAs(sa);
    assertThat(sessions.of(b).isOf(b)).isTrue();
  }

  @Test
  void threadsMeetingAConnectionAtOnceGetOneSession() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      for (int round = 0; round < 200; round++) {
        JdbcSessions sessions = new JdbcSessions(List.of(), JdbcPooler.AUTO, -1, List.of());
        Connection c = connection();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<JdbcSession>> met = new java.util.ArrayList<>();
        for (int t = 0; t < 4; t++) {
          met.add(pool.submit(() -> {
            start.await();
            return sessions.of(c);
          }));
        }
        start.countDown();
        JdbcSession first = met.get(0).get();
        for (Future<JdbcSession> f : met) {
          assertThat(f.get()).as("round " + round).isSameAs(first);
        }
        assertThat(sessions.get(c)).isSameAs(first);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
