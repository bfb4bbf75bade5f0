package dev.fencing.agent.it.host;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.AppStdin;

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

  private static String moduleClasspath() {
    return String.join(File.pathSeparator, AgentProcesses.appClasspath(), System.getProperty("fencing.it.h2.jar"),
        AgentProcesses.libraries("httpclient5-", "httpcore5-", "slf4j-api-"));
  }

  /** {@code agentArgs} null: no agent at start (to attach one later). */
  private static AgentJvm start(Path javaHome, String name, String agentArgs) {
    AgentJvm.Builder b = AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome))
        .classpath(AgentProcesses.appClasspath()).mainClass(ModuleApp.class.getName()).args(moduleClasspath());
    AgentJvm app = (agentArgs == null ? b.noAgent() : b.agentArgs(agentArgs)).start();
    app.awaitOutput("APP STARTED", Duration.ofSeconds(20));
    return app;
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void sideEffectsOfAModuleThatHidesTheBootstrapPackageAreFencedAndSeeNoAgentError(Path javaHome) throws Exception {
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        // etcd is gone when the app closes: shutdown.timeout=0s, no wait for a release that cannot land.
        AgentJvm app = start(javaHome, "foreign-loader", "lock=modules,lease.ttl=3s,lease.safety-margin=500ms,"
            + "shutdown.timeout=0s,http.port="
            + port + ",etcd.endpoints=" + etcd.endpoints())) {
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

  /**
   * Without the class-loader instrumentation the module's loader cannot see the bootstrap part: its classes are left
   * as they are (the application sees no error), the gap is one warning naming the loader, and /status lists it.
   */
  @ParameterizedTest
  @MethodSource("javaHomes")
  void aLoaderThatCannotSeeTheBootstrapPackageIsLeftUnfencedWithOneWarningAndNoErrorForTheApp(Path javaHome)
      throws Exception {
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = start(javaHome, "foreign-loader-off", "lock=modules,http.port=" + port
            + ",instrumentation.class-loaders.enabled=false,etcd.endpoints=" + etcd.endpoints())) {
      Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      AppStdin answers = AppStdin.answers(app, "RESULT ", "ERR ");

      assertThat(answers.run("RUN jdbc:h2:mem:module;DB_CLOSE_DELAY=-1"))
          .isEqualTo("RESULT updated=2 session-token=null http=200 received=none");
      assertThat(answers.run("RUN jdbc:h2:mem:module;DB_CLOSE_DELAY=-1"))
          .isEqualTo("RESULT updated=2 session-token=null http=200 received=none");
      List<String> warnings = app.output().lines().filter(l -> l.contains("not fenced")).toList();
      assertThat(warnings).hasSize(1);
      assertThat(warnings.get(0))
          .startsWith("[fencing-agent] WARN class loader org.example.modules.ModuleLoader 'deployment.app'@")
          .contains("cannot see the agent's bootstrap classes (dev.fencing.agent.bootstrap.Fencing: "
              + "java.lang.ClassNotFoundException: dev.fencing.agent.bootstrap.Fencing)")
          .contains("Make it delegate the package dev.fencing.agent.bootstrap to the boot loader");
      assertThat(app.output()).doesNotContain("NoClassDefFoundError");
      assertThat(Http.get("http://127.0.0.1:" + port + "/status"))
          .containsPattern("\"unfencedClassLoaders\":\\[\"org.example.modules.ModuleLoader 'deployment.app'@[0-9a-f]+\"\\]")
          .contains("\"unfencedClassLoadersTotal\":1");
    }
  }

  /**
   * Attached to a running host whose module loader and driver were loaded before the agent: the loader is made to
   * delegate before the driver's classes are retransformed, so they are fenced, not left out.
   */
  @ParameterizedTest
  @MethodSource("javaHomes")
  void dynamicAttachFencesAModuleLoadedBeforeTheAgent(Path javaHome) throws Exception {
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single(); AgentJvm app = start(javaHome, "foreign-loader-attach", null)) {
      AppStdin answers = AppStdin.answers(app, "RESULT ", "ERR ");
      assertThat(answers.run("RUN jdbc:h2:mem:module;DB_CLOSE_DELAY=-1"))
          .isEqualTo("RESULT updated=2 session-token=null http=200 received=none");

      com.sun.tools.attach.VirtualMachine vm = com.sun.tools.attach.VirtualMachine.attach(Long.toString(app.pid()));
      try {
        vm.loadAgent(System.getProperty("fencing.agent.jar"),
            "lock=attached,http.port=" + port + ",etcd.endpoints=" + etcd.endpoints());
      } finally {
        vm.detach();
      }
      String token = Http.jsonField(Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15)), "token");
      assertThat(answers.run("RUN jdbc:h2:mem:module;DB_CLOSE_DELAY=-1"))
          .isEqualTo("RESULT updated=2 session-token=" + token + " http=200 received=" + token);
      assertThat(app.output()).doesNotContain("NoClassDefFoundError").doesNotContain("not fenced");
    }
  }
}
