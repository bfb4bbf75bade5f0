package dev.fencing.agent.it.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.apps.ApacheHttp4Driver;
import dev.fencing.agent.it.apps.ApacheHttpApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Apache HttpClient 4.x hook, the default client (default redirect strategy and DefaultHttpRequestRetryHandler,
 * which would retry a request that was never sent three more times: a blocked one is blocked, and counted, once),
 * with the oldest (4.5) and the latest (4.5.14) supported release loaded side by side in one application JVM per
 * JDK: a mode is a version's client ("4.5 SYNC").
 */
class ApacheHttpClient4IT extends AbstractHttpClientIT {
  @Override
  protected String lock() {
    return "apache4";
  }

  @Override
  protected List<Run> runs() {
    return AgentProcesses.javaHomes().stream().map(Run::new).toList();
  }

  /** The Apache HttpClient 4 versions of testing/library-versions, oldest first. */
  static List<String> versions() {
    List<String> versions = AgentProcesses.libraryVersions("httpclient4");
    assertThat(versions).as("oldest and latest Apache HttpClient 4").hasSize(2);
    return versions;
  }

  /** The jars of {@code version}, as testing/library-versions resolved them. */
  static Path jars(String version) {
    return AgentProcesses.libraryJars("httpclient4", version);
  }

  @Override
  protected AgentJvm start(Run run, String agentArgs) throws IOException {
    List<String> args = new ArrayList<>(List.of("driver=" + ApacheHttp4Driver.class.getName()));
    versions().forEach(v -> args.add(v + "=" + jars(v)));
    AgentJvm app = AgentJvm.builder().javaHome(run.javaHome())
        .name("apache4-java" + AgentProcesses.javaVersion(run.javaHome())).agentArgs(agentArgs)
        .classpath(AgentProcesses.appClasspath()).mainClass(ApacheHttpApp.class.getName())
        .args(args.toArray(String[]::new)).start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(30));
    for (String v : versions()) {
      assertThat(app.output()).contains("LOADED " + v + " httpclient-" + v + ".jar");
    }
    return app;
  }

  /** 4.x has a classic client only. */
  @Override
  protected List<String> modes(Run run) {
    return versions().stream().map(v -> v + " SYNC").toList();
  }

  /** The caller's request object keeps only its own header. */
  @Override
  protected String answered(String mode, int status) {
    return "STATUS " + status + " callerHeaders=[X-App]";
  }

  /** 4.x's default redirect strategy follows a 307 for GET and HEAD only. */
  @Override
  protected List<Redirect> redirects(Run run) {
    return modes(run).stream().map(m -> new Redirect(m, "GET", "/redirect", "GET")).toList();
  }

  /** fencing.instrumentation.apache-httpclient-4.enabled=false: the client runs as without the agent. */
  @Test
  void theSwitchLeavesTheClientAlone() throws Exception {
    String v = versions().get(versions().size() - 1);
    Path latest = jars(v);
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); RecordingServer open = new RecordingServer();
        AgentJvm app = AgentJvm.builder().name("apache4-off")
            .agentArgs("lock=apache4,instrumentation.apache-httpclient-4.enabled=false,http.port=" + port
                + ",etcd.endpoints=" + etcd.endpoints())
            .classpath(AgentProcesses.appClasspath()).mainClass(ApacheHttpApp.class.getName())
            .args("driver=" + ApacheHttp4Driver.class.getName(), v + "=" + latest).start()) {
      app.awaitOutput("APP STARTED", Duration.ofSeconds(30));
      AppStdin stdin = AppStdin.http(app);
      Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      assertThat(stdin.run(v + " SYNC POST " + open.base() + "/ok")).isEqualTo("STATUS 200 callerHeaders=[X-App]");
      assertThat(open.received).containsExactly("POST /ok token=null lock=null");
    }
  }
}
