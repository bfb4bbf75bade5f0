package dev.fencing.agent.it.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.testing.AgentJvm;
import java.util.List;

/** The JDK HttpClient hook: send and sendAsync of the app's client, which follows redirects. */
class JavaHttpClientIT extends AbstractHttpClientIT {
  @Override
  protected String lock() {
    return "web";
  }

  @Override
  protected List<Run> runs() {
    return AgentProcesses.javaHomes().stream().map(Run::new).toList();
  }

  @Override
  protected AgentJvm start(Run run, String agentArgs) {
    return HttpAppJvm.start(run.javaHome(), "http", agentArgs);
  }

  @Override
  protected List<String> modes(Run run) {
    return List.of("SEND", "ASYNC");
  }

  @Override
  protected String answered(String mode, int status) {
    // The caller's request object is never changed by the agent: only the app's own header.
    return "STATUS " + status + " callerHeaders=[X-App]";
  }

  @Override
  protected String blocked(String mode, String message) {
    // send() rethrows an IOException from the exchange as a new one of its own, with the message.
    return mode.equals("SEND") ? "ERR java.io.IOException: " + message : super.blocked(mode, message);
  }

  @Override
  protected List<Case> afterExpiry(Run run) {
    return List.of(new Case("a method written in lower case (the client sends it as written) is blocked too", s -> {
      s.send("SEND", "post", s.open, "/ok", blocked("SEND", s.blockedMessage()));
      s.count(s.lock, false, "blocked");
      assertThat(s.open.received).isEmpty();
    }), new Case("a 409 to an untagged GET is counted, and credited to no destination (not the thread's last write)",
        s -> {
          s.send("ASYNC", "POST", s.open, "/ok", blocked("ASYNC", s.blockedMessage()));
          s.count(s.lock, false, "blocked");
          s.send("ASYNC", "GET", s.fenced, "/stale", answered("ASYNC", 409), s.untagged("GET", "/stale"));
          s.countRejectionOfUntagged("stale_token");
        }));
  }
}
