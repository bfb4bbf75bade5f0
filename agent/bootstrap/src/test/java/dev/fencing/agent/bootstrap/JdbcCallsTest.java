package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every JDBC advice does around its hook call, with a hook that throws what it is told and a recording gate. */
class JdbcCallsTest {
  private final List<Throwable> hookFailures = new ArrayList<>();
  private final List<String> calls = new ArrayList<>();
  /** What every call of the hook throws; null: it answers 5 (or nothing). */
  private Throwable thrown;

  @BeforeEach
  void install() {
    Fencing.install(new SideEffectGate() {
      @Override
      public Decision decide(Channel channel, boolean write, boolean fenced) {
        return Decision.pass("orders");
      }

      @Override
      public Decision hookFailed(Channel channel, boolean write, Throwable error) {
        assertThat(channel).isEqualTo(Channel.JDBC);
        hookFailures.add(error);
        return Decision.block("orders", 7, BlockReason.AGENT_FAILED); // ignored: the hook decided its own failures
      }
    });
    Fencing.installJdbc((JdbcHook) Proxy.newProxyInstance(JdbcHook.class.getClassLoader(),
        new Class<?>[] {JdbcHook.class}, (proxy, method, args) -> {
          calls.add(method.getName() + " " + Arrays.toString(args));
          if (thrown != null) {
            throw thrown;
          }
          return method.getReturnType() == int.class ? 5 : null;
        }));
  }

  @AfterEach
  void uninstall() {
    Fencing.installJdbc(JdbcHook.NOOP);
    Fencing.installFallback(Decision.block("(unknown)", 0, BlockReason.AGENT_FAILED));
  }

  @Test
  void eachCallReachesTheHookWithItsArgumentsAndReturnsItsAnswer() throws Exception {
    assertThat(JdbcCalls.beforeExecute("st", "insert", JdbcHook.COPY)).isEqualTo(5);
    JdbcCalls.afterExecute("st", 5, null);
    assertThat(JdbcCalls.beforeCommit("conn")).isEqualTo(5);
    assertThat(JdbcCalls.beforeSetAutoCommit("conn", true)).isEqualTo(5);
    assertThat(JdbcCalls.beforeSetAutoCommit("conn", false)).isZero();

    assertThat(calls).containsExactly("beforeExecute [st, insert, 3]", "afterExecute [st, 5, null]",
        "beforeCommit [conn]", "beforeCommit [conn]", "transactionStarting [conn]");
    assertThat(hookFailures).isEmpty();
  }

  @Test
  void theHooksSqlExceptionReachesTheApplicationAsItIs() {
    SQLException blocked = new SQLTransientConnectionException("blocked", "FN003");
    thrown = blocked;

    assertThatThrownBy(() -> JdbcCalls.beforeExecute("st", null, JdbcHook.PREPARED)).isSameAs(blocked);
    assertThatThrownBy(() -> JdbcCalls.afterExecute("st", 5, null)).isSameAs(blocked);
    assertThatThrownBy(() -> JdbcCalls.beforeCommit("conn")).isSameAs(blocked);
    assertThatThrownBy(() -> JdbcCalls.beforeSetAutoCommit("conn", true)).isSameAs(blocked);
    assertThat(hookFailures).isEmpty();
  }

  @Test
  void anythingElseIsCountedAndTheCallRunsAsIfTheAgentWereAbsent() throws Exception {
    IllegalStateException bug = new IllegalStateException("bug");
    thrown = bug;

    assertThat(JdbcCalls.beforeExecute("st", "update t", JdbcHook.SQL)).isZero();
    JdbcCalls.afterExecute("st", 5, null);
    assertThat(JdbcCalls.beforeCommit("conn")).isZero();
    assertThat(JdbcCalls.beforeSetAutoCommit("conn", false)).isZero();
    assertThat(hookFailures).containsExactly(bug, bug, bug, bug);

    Throwable linkage = new NoClassDefFoundError("org/h2/Missing");
    thrown = linkage;
    assertThat(JdbcCalls.beforeExecute("st", null, JdbcHook.BATCH)).isZero();
    Throwable notJdbcs = new IOException("a checked exception, but not the hook's answer");
    thrown = notJdbcs;
    assertThat(JdbcCalls.beforeExecute("st", null, JdbcHook.BATCH)).isZero();
    assertThat(hookFailures).endsWith(linkage, notJdbcs);
  }

  @Test
  void sqlExceptionsAreToldByTheirClassHierarchy() {
    assertThat(JdbcCalls.isSqlException(new SQLException("x"))).isTrue();
    assertThat(JdbcCalls.isSqlException(new SQLTransientConnectionException("x"))).isTrue();
    assertThat(JdbcCalls.isSqlException(new Exception("x", new SQLException("cause")))).isFalse();
    assertThat(JdbcCalls.isSqlException(new Throwable("x"))).isFalse();
    assertThat(JdbcCalls.isSqlException(new Error("x"))).isFalse();
  }
}
