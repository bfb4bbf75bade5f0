package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.testing.AgentJvm;
import java.util.List;

/** The HttpURLConnection hook (a java.base class): a connection that follows redirects, a body for all but GET. */
class HttpUrlConnectionIT extends AbstractHttpClientIT {
  @Override
  protected String lock() {
    return "urlc";
  }

  @Override
  protected List<Run> runs() {
    return AgentProcesses.javaHomes().stream().map(Run::new).toList();
  }

  @Override
  protected AgentJvm start(Run run, String agentArgs) {
    return HttpAppJvm.start(run.javaHome(), "urlc", agentArgs);
  }

  @Override
  protected List<String> modes(Run run) {
    return List.of("URLC");
  }

  @Override
  protected String answered(String mode, int status) {
    return "STATUS " + status;
  }

  /** HttpURLConnection refuses PATCH before any hook runs. */
  @Override
  protected List<String> unsafeMethods() {
    return List.of("POST", "PUT", "DELETE");
  }

  @Override
  protected List<Redirect> redirects(Run run) {
    return List.of(new Redirect("URLC", "PUT", "/redirect", "PUT"));
  }
}
