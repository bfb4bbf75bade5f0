package dev.fencing.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.apps.ModuleApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Application code, its JDBC driver and its HTTP client deployed in a class loader that never delegates the agent's
 * bootstrap package (as JBoss Modules and OSGi frameworks do): the application sees no error of the agent's, and its
 * side effects are fenced like any other.
 */
class ForeignClassLoaderIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void sideEffectsOfAModuleThatHidesTheBootstrapPackageAreFencedAndSeeNoAgentError(Path javaHome) throws Exception {
    String module = String.join(File.pathSeparator, AgentProcesses.appClasspath(), System.getProperty("fencing.it.h2.jar"),
        AgentProcesses.libraries("httpclient5-", "httpcore5-", "slf4j-api-"));
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome).name("foreign-loader-java" + AgentProcesses.javaVersion(javaHome))
            .classpath(AgentProcesses.appClasspath()).mainClass(ModuleApp.class.getName()).args(module)
            .agentArgs("lock=modules,lease.ttl=3s,lease.safety-margin=500ms,http.port=" + port
                + ",etcd.endpoints=" + etcd.endpoints())
            .start()) {
      app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      AppStdin answers = AppStdin.answers(app, "RESULT ", "ERR ");

      // Statement.execute, executeUpdate, PreparedStatement.executeUpdate and an HTTP POST from inside the module:
      // no error, the session carries the token the fences read, and the request carries it too.
      assertThat(answers.run("RUN jdbc:h2:mem:module;DB_CLOSE_DELAY=-1"))
          .isEqualTo("RESULT updated=2 session-token=" + token + " http=200 received=" + token);
      assertThat(app.output()).doesNotContain("NoClassDefFoundError").doesNotContain("not fenced");

      // The lease ends: the module's writes are blocked with the agent's deliberate SQLException, nothing else.
      for (EtcdNode n : etcd.nodes()) {
        n.kill();
      }
      Http.awaitStatus(port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
      assertThat(answers.run("WRITE jdbc:h2:mem:module;DB_CLOSE_DELAY=-1"))
          .startsWith("ERR java.sql.SQLException: Fencing Agent blocked a jdbc side effect: lock 'modules', token " + token);
      assertThat(Http.get("http://127.0.0.1:" + port + "/metrics"))
          .contains("fencing_side_effects_total{channel=\"jdbc\",fenced=\"false\",lock=\"modules\",outcome=\"blocked\"} 1.0")
          .contains("fencing_hook_failures_total{channel=\"jdbc\",lock=\"modules\"} 0.0");
    }
  }
}
