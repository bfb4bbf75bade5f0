package dev.fencing.agent.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;
import dev.fencing.agent.it.apps.HttpApp;
import dev.fencing.agent.it.http.RecordingServer;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Java runtime built with only some JDK modules (a jlink image; here {@code --limit-modules}): the libraries it can
 * run are fenced, the ones it cannot are left out by name, and a coordinator client that cannot run says which module
 * to add instead of retrying forever.
 */
class LimitedRuntimeIT {
  private static EtcdCluster etcd;
  private static RecordingServer fenced;

  @BeforeAll
  static void start() throws Exception {
    etcd = EtcdCluster.single();
    fenced = new RecordingServer();
  }

  @AfterAll
  static void stop() {
    if (fenced != null) {
      fenced.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  private static AgentJvm app(String lock, String modules, int port) {
    AgentJvm app = AgentJvm.builder().javaHome(Path.of(System.getProperty("java.home")))
        .name("limited-" + lock).jvmArg("--limit-modules").jvmArg(modules)
        .agentArgs("lock=" + lock + ",lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port + ",fenced.http=127.0.0.1:"
            + fenced.port() + ",etcd.endpoints=" + etcd.endpoints())
        .classpath(AgentProcesses.appClasspath()).mainClass(HttpApp.class.getName()).start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    return app;
  }

  @Test
  void withoutJavaSqlTheHttpClientIsStillFencedAndJdbcIsLeftOutByName() throws Exception {
    int port = Ports.freePort();
    try (AgentJvm app = app("nosql", "java.base,java.instrument,java.net.http,java.logging,jdk.httpserver", port)) {
      String status = Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(20));
      String token = Http.jsonField(status, "token");

      assertThat(AppStdin.http(app).run("SEND POST " + "http://127.0.0.1:" + fenced.port() + "/nosql"))
          .startsWith("STATUS 200");
      assertThat(fenced.received).contains("POST /nosql token=[" + token + "] lock=[nosql]");
      assertThat(app.output()).contains("instrumentation 'jdbc' is off: this Java runtime has no java.sql module")
          .doesNotContain("could not install");
    }
  }

  @Test
  void withoutTheModuleTheEtcdClientNeedsTheAgentFailsOnceSayingWhichModuleToAdd() throws Exception {
    int port = Ports.freePort();
    try (AgentJvm app = app("nolog", "java.base,java.instrument,java.net.http,jdk.httpserver", port)) {
      String status = Http.awaitStatus(port, "\"state\":\"FAILED\"", Duration.ofSeconds(20));
      assertThat(status).contains("lacks the JDK module java.logging that the etcd client needs");
      // Fail closed, deliberately: the fenced destination never sees an untagged request.
      assertThat(AppStdin.http(app).run("SEND POST " + "http://127.0.0.1:" + fenced.port() + "/nolog"))
          .startsWith("ERR ");
      assertThat(fenced.received).noneMatch(line -> line.contains("/nolog"));
      assertThat(app.output()).contains("add it to the runtime (jlink --add-modules java.logging")
          .doesNotContain("etcd error");
    }
  }
}
