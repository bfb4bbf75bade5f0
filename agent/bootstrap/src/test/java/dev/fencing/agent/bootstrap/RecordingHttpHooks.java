package dev.fencing.agent.bootstrap;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A side-effect gate and an HTTP hook in place of the agent core, for tests of the HTTP advice helpers: both answer
 * {@link #answer}, and they record what they were asked, the responses reported and the hook failures handed to
 * the gate.
 */
final class RecordingHttpHooks {
  /** Each decision asked of the HTTP hook: method, scheme, host, port, and " under " the carried context if any. */
  final List<String> asked = new ArrayList<>();
  /** Each response reported: status and rejected header, then the lock and target it went with, if given. */
  final List<String> responses = new ArrayList<>();
  final List<Throwable> hookFailures = new ArrayList<>();
  volatile Decision answer;

  /** Installs both, answering {@code decision}; {@link #uninstall()} after the test. */
  RecordingHttpHooks install(Decision decision) {
    answer = decision;
    Fencing.install(new SideEffectGate() {
      @Override
      public Decision decide(Channel channel, boolean write, boolean fenced) {
        return answer;
      }

      @Override
      public Decision hookFailed(Channel channel, boolean write, Throwable error) {
        hookFailures.add(error);
        return Decision.pass("orders");
      }
    });
    Fencing.installHttp(new HttpHook() {
      @Override
      public Decision decide(String method, String scheme, String host, int port) {
        Object carried = TokenContext.carried();
        asked.add(method + " " + scheme + " " + host + " " + port + (carried == null ? "" : " under " + carried));
        return answer;
      }

      @Override
      public void responded(int status, String rejectedHeader) {
        responses.add(status + " " + rejectedHeader);
      }

      @Override
      public void responded(int status, String rejectedHeader, String lock, String scheme, String host, int port) {
        responses.add(status + " " + rejectedHeader + " lock " + lock + " at " + scheme + " " + host + " " + port);
      }

      @Override
      public void observe(CompletableFuture<?> response) {}
    });
    return this;
  }

  static void uninstall() {
    Fencing.installHttp(HttpHook.NOOP);
    Fencing.installFallback(Decision.block("(unknown)", 0, BlockReason.AGENT_FAILED));
  }
}
