package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.apps.HttpApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import java.nio.file.Path;
import java.time.Duration;

/** Starts {@link HttpApp} (the JDK HttpClient and HttpURLConnection app) with the real agent. */
public final class HttpAppJvm {
  private HttpAppJvm() {}

  /**
   * The HTTP app with the agent (lock {@code lock}, 3 s lease, status on {@code port}), {@code fenced} listed in
   * fencing.fenced.http; returns once the app has started.
   */
  public static AgentJvm start(Path javaHome, String name, String lock, int port, RecordingServer fenced,
      EtcdCluster etcd) {
    return start(javaHome, name, "lock=" + lock + ",lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port
        + ",fenced.http=127.0.0.1:" + fenced.port() + ",etcd.endpoints=" + etcd.endpoints());
  }

  /** The HTTP app with {@code -javaagent:<agent jar>=<agentArgs>}; returns once the app has started. */
  public static AgentJvm start(Path javaHome, String name, String agentArgs) {
    AgentJvm app = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
        .agentArgs(agentArgs).classpath(AgentProcesses.appClasspath()).mainClass(HttpApp.class.getName()).start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    return app;
  }
}
