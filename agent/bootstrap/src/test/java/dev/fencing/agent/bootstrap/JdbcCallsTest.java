package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every JDBC advice does around its hook call, with a hook that throws what it is told and a recording gate. */
class JdbcCallsTest {
  private final List<Throwable> hookFailures = new ArrayList<>();
  private final List<String> calls = new ArrayList<>();
  private Exception thrown;
  private RuntimeException thrownUnchecked;

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
    Fencing.installJdbc(new JdbcHook() {
      private int answer(String call) throws Exception {
        calls.add(call);
        if (thrown != null) {
          throw thrown;
        }
        if (thrownUnchecked != null) {
          throw thrownUnchecked;
        }
        return 5;
      }

      @Override
      public int beforeExecute(Object statement, String sql, int kind) throws Exception {
        return answer("beforeExecute " + statement + " " + sql + " " + kind);
      }

      @Override
      public void afterExecute(Object statement, int entered, Throwable error) throws Exception {
        answer("afterExecute " + statement + " " + entered + " " + error);
      }

      @Override
      public int beforeCommit(Object connection) throws Exception {
        return answer("beforeCommit " + connection);
      }

      @Override
      public void afterCommit(Object connection, int entered) {}

      @Override
      public void copyManagerCreated(Object manager, Object connection) {}

      @Override
      public void transactionStarting(Object connection) {
        calls.add("transactionStarting " + connection);
        if (thrownUnchecked != null) {
          throw thrownUnchecked;
        }
      }

      @Override
      public void prepared(Object statement, String sql) {}

      @Override
      public void rolledBack(Object connection, boolean wholeTransaction) {}
    });
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

    assertThat(calls).containsExactly("beforeExecute st insert 3", "afterExecute st 5 null", "beforeCommit conn",
        "beforeCommit conn", "transactionStarting conn");
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
  void anyOtherErrorIsCountedAndTheCallRunsAsIfTheAgentWereAbsent() throws Exception {
    IllegalStateException bug = new IllegalStateException("bug");
    thrownUnchecked = bug;

    assertThat(JdbcCalls.beforeExecute("st", "update t", JdbcHook.SQL)).isZero();
    JdbcCalls.afterExecute("st", 5, null);
    assertThat(JdbcCalls.beforeCommit("conn")).isZero();
    assertThat(JdbcCalls.beforeSetAutoCommit("conn", false)).isZero();

    assertThat(hookFailures).containsExactly(bug, bug, bug, bug);
  }

  @Test
  void aCheckedExceptionOtherThanSqlExceptionIsTheAgentsToo() throws Exception {
    Exception odd = new java.io.IOException("not JDBC's");
    thrown = odd;

    assertThat(JdbcCalls.beforeExecute("st", null, JdbcHook.BATCH)).isZero();

    assertThat(hookFailures).containsExactly(odd);
  }

  @Test
  void anErrorIsCountedToo() throws Exception {
    LinkageError linkage = new NoClassDefFoundError("org/h2/Missing");
    Fencing.installJdbc(new RethrowingHook(linkage));

    assertThat(JdbcCalls.beforeExecute("st", null, JdbcHook.PREPARED)).isZero();

    assertThat(hookFailures).containsExactly(linkage);
  }

  @Test
  void sqlExceptionsAreToldByTheirClassHierarchy() {
    assertThat(JdbcCalls.isSqlException(new SQLException("x"))).isTrue();
    assertThat(JdbcCalls.isSqlException(new SQLTransientConnectionException("x"))).isTrue();
    assertThat(JdbcCalls.isSqlException(new Exception("x", new SQLException("cause")))).isFalse();
    assertThat(JdbcCalls.isSqlException(new Throwable("x"))).isFalse();
    assertThat(JdbcCalls.isSqlException(new Error("x"))).isFalse();
  }

  /** A hook whose every call throws one error. */
  private static final class RethrowingHook implements JdbcHook {
    private final Error error;

    RethrowingHook(Error error) {
      this.error = error;
    }

    @Override
    public int beforeExecute(Object statement, String sql, int kind) {
      throw error;
    }

    @Override
    public void afterExecute(Object statement, int entered, Throwable error) {
      throw this.error;
    }

    @Override
    public int beforeCommit(Object connection) {
      throw error;
    }

    @Override
    public void afterCommit(Object connection, int entered) {}

    @Override
    public void copyManagerCreated(Object manager, Object connection) {}

    @Override
    public void transactionStarting(Object connection) {}

    @Override
    public void prepared(Object statement, String sql) {}

    @Override
    public void rolledBack(Object connection, boolean wholeTransaction) {}
  }
}
