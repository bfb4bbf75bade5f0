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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
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

  /** target/apache-httpclient-4/<version>/, filled by the apache-httpclient-4-range execution of testing/agent-it. */
  static List<Path> libraryDirs() throws IOException {
    String dir = System.getProperty("fencing.it.apache.httpclient4");
    if (dir == null || !Files.isDirectory(Path.of(dir))) {
      throw new IllegalStateException("Apache HttpClient 4 jars missing (" + dir + "): run through Maven "
          + "(mvn verify -pl testing/agent-it -am), whose apache-httpclient-4-range execution copies them");
    }
    try (Stream<Path> s = Files.list(Path.of(dir))) {
      List<Path> dirs = s.filter(Files::isDirectory).sorted().toList();
      assertThat(dirs).as("oldest and latest Apache HttpClient 4 in " + dir).hasSize(2);
      return dirs;
    }
  }

  @Override
  protected AgentJvm start(Run run, String agentArgs) throws IOException {
    List<String> args = new ArrayList<>(List.of("driver=" + ApacheHttp4Driver.class.getName()));
    libraryDirs().forEach(p -> args.add(p.getFileName() + "=" + p));
    AgentJvm app = AgentJvm.builder().javaHome(run.javaHome())
        .name("apache4-java" + AgentProcesses.javaVersion(run.javaHome())).agentArgs(agentArgs)
        .classpath(AgentProcesses.appClasspath()).mainClass(ApacheHttpApp.class.getName())
        .args(args.toArray(String[]::new)).start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(30));
    for (Path p : libraryDirs()) {
      assertThat(app.output()).contains("LOADED " + p.getFileName() + " httpclient-" + p.getFileName() + ".jar");
    }
    return app;
  }

  /** 4.x has a classic client only. */
  @Override
  protected List<String> modes(Run run) {
    try {
      return libraryDirs().stream().map(p -> p.getFileName() + " SYNC").toList();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
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
    Path latest = libraryDirs().get(libraryDirs().size() - 1);
    String v = latest.getFileName().toString();
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
