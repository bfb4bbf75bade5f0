package dev.fencing.agent.status;

import dev.fencing.agent.scope.LockRuntime;
import dev.fencing.agent.scope.Scopes;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.LeasePhase;
import dev.fencing.agent.token.TokenView;

/**
 * The answer of {@code GET /ready}: not ready while any lock of this JVM is {@code FAILED} (misconfigured, or the
 * coordinator unreachable before the first lease) and, with fencing.ready.require-holding, while the JVM-wide lock is
 * not held with a usable token; ready otherwise. One line says why, for {@code kubectl describe pod}.
 */
public final class Readiness {
  /** HTTP status and the one-line body. */
  public static final class Answer {
    private final boolean ready;
    private final String line;

    Answer(boolean ready, String line) {
      this.ready = ready;
      this.line = line;
    }

    public boolean ready() {
      return ready;
    }

    public int status() {
      return ready ? 200 : 503;
    }

    public String line() {
      return line;
    }
  }

  private Readiness() {}

  public static Answer of(Scopes scopes, boolean requireHolding) {
    for (LockRuntime r : scopes.all()) {
      TokenView v = r.state().view();
      if (v.phaseAt(r.state().now()) == LeasePhase.FAILED) {
        String detail = v.detail();
        return new Answer(false, "not ready: " + subject(r) + " FAILED" + (detail == null ? "" : ": " + detail));
      }
    }
    LockRuntime jvmWide = scopes.outside();
    if (!jvmWide.jvmWide() || !jvmWide.campaigns()) {
      return new Answer(true, "ready: no JVM-wide lock" + (scopes.locks().isEmpty() ? "" : ", none FAILED"));
    }
    TokenView v = jvmWide.state().view();
    LeasePhase phase = v.phaseAt(jvmWide.state().now());
    Grant g = v.grant();
    String state = "lock '" + jvmWide.lock() + "' " + phase + (phase == LeasePhase.HOLDING && g != null
        ? " with fencing token " + g.token() + (g.reused() ? " (reused)" : g.overflow() ? " (overflow)" : "") : "");
    if (requireHolding && !jvmWide.holding()) {
      return new Answer(false, "not ready: " + state + " (fencing.ready.require-holding=true)");
    }
    return new Answer(true, "ready: " + state);
  }

  private static String subject(LockRuntime r) {
    return r.campaigns() || r.jvmWide() ? "lock '" + r.lock() + "'" : "agent";
  }
}
