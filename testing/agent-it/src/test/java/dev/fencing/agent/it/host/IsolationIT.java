package dev.fencing.agent.it.host;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The agent is a guest: the application keeps its own library versions and never sees the agent's. */
class IsolationIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void appWithItsOwnLibraryVersionsRunsUnchangedBesideTheAgent(Path javaHome) throws Exception {
    String cp = Files.readString(Path.of(System.getProperty("fencing.isolation.classpath.file"))).trim()
        + java.io.File.pathSeparator + System.getProperty("fencing.isolation.classes");
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome).name("isolation-java" + AgentProcesses.javaVersion(javaHome))
            .agentArgs("lock=isolation,http.port=" + port + ",etcd.endpoints=" + etcd.endpoints())
            .classpath(cp).mainClass("dev.fencing.isolation.IsolationApp").args("8000").start()) {
      String out = app.awaitOutput("ISOLATION DONE", Duration.ofSeconds(30));
      assertThat(out)
          .contains("LIB grpc grpc-api-1.60.0.jar")
          .contains("LIB netty netty-buffer-4.1.100.Final.jar")
          .contains("LIB protobuf protobuf-java-3.21.12.jar")
          .contains("LIB guava guava-31.1-jre.jar")
          .contains("LIB micrometer micrometer-core-1.10.13.jar")
          .contains("LIB opentelemetry opentelemetry-api-1.30.0.jar")
          .contains("LIB jackson jackson-databind-2.14.3.jar")
          .contains("LIB slf4j slf4j-api-1.7.36.jar")
          .contains("LIB bytebuddy byte-buddy-1.14.10.jar")
          .contains("USED [k] 3 x 1.0 [1,2,3] true")
          .contains("HIDDEN dev.fencing.agent.shaded.io.grpc.Metadata")
          .contains("HIDDEN dev.fencing.agent.config.AgentConfig")
          .contains("HIDDEN dev.fencing.agent.shaded.com.google.common.collect.ImmutableList")
          .doesNotContain("VISIBLE");
      // ...while the agent, with its own newer copies of the same libraries, holds the lease.
      Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      assertThat(app.awaitExit(Duration.ofSeconds(20))).isZero();
    }
  }

  @Test
  void agentJarShowsNoUnrelocatedThirdPartyPackageNorProtocol() throws Exception {
    try (JarFile jar = new JarFile(System.getProperty("fencing.agent.jar"))) {
      int classes = 0;
      List<String> bootPath = new ArrayList<>();
      for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
        String name = e.nextElement().getName();
        if (name.startsWith("inst/")) {
          if (name.endsWith(".classdata")) {
            classes++;
            assertThat(name).as("hidden class").startsWith("inst/dev/fencing/"); // ours, or relocated under it
          }
          assertThat(name).doesNotEndWith(".class");
        } else {
          // Besides the bootstrap part and the relocated protocol it uses: the OpenTelemetry agent extension, a nested
          // jar (never on a class path of its own).
          assertThat(name).as("visible entry").matches("META-INF/(MANIFEST\\.MF)?|dev/(fencing/(agent/(bootstrap/)?)?)?|"
              + "dev/fencing/agent/[A-Za-z0-9$]+\\.class|dev/fencing/agent/bootstrap/[A-Za-z0-9$]+\\.class|"
              + "dev/fencing/agent/shaded/(protocol/([A-Za-z0-9$]+\\.class)?)?|"
              + "otel/(fencing-otel-extension\\.jar)?");
          if (name.endsWith(".class")) {
            bootPath.add(name);
          }
        }
        // An application with the fence libraries has its own dev.fencing.protocol: the agent's copy must never be
        // the one it gets, from the boot class path or anywhere else in the jar.
        assertThat(name).as("unrelocated protocol class").doesNotContain("dev/fencing/protocol/");
      }
      assertThat(bootPath).as("the bootstrap part's protocol classes, relocated beside it on the boot class path")
          .contains("dev/fencing/agent/shaded/protocol/TokenGrammar.class",
              "dev/fencing/agent/bootstrap/TokenContext.class");
      assertThat(classes).as("bundled classes").isGreaterThan(5000);
      // The bootstrap part runs from the jar's root alone, where no dev.fencing.protocol exists: it reaches the
      // protocol under its relocated name (a NoClassDefFoundError here would be one in every JVM with the agent).
      try (URLClassLoader root = new URLClassLoader(new URL[] {Path.of(jar.getName()).toUri().toURL()},
          ClassLoader.getPlatformClassLoader())) {
        assertThat(root.getResource("dev/fencing/protocol/TokenGrammar.class")).as("unrelocated protocol").isNull();
        Class<?> context = root.loadClass("dev.fencing.agent.bootstrap.TokenContext");
        assertThat(context.getMethod("parseToken", String.class).invoke(null, "42")).isEqualTo(42L);
        assertThat(context.getMethod("validLock", String.class).invoke(null, "ledger")).isEqualTo(true);
        assertThat(context.getMethod("wellFormedGrant", String.class).invoke(null, "1f2e")).isEqualTo(true);
        assertThat(root.loadClass("dev.fencing.agent.bootstrap.HttpHook").getField("TOKEN_HEADER").get(null))
            .isEqualTo("Fencing-Token");
        assertThat(root.loadClass("dev.fencing.agent.bootstrap.KafkaHook").getField("HEADER").get(null))
            .isEqualTo("fencing");
      }
      assertThat(jar.getManifest().getMainAttributes().getValue("Premain-Class")).isEqualTo("dev.fencing.agent.FencingAgent");
      assertThat(jar.getManifest().getMainAttributes().getValue("Agent-Class")).isEqualTo("dev.fencing.agent.FencingAgent");
      assertThat(jar.getManifest().getMainAttributes().getValue("Can-Retransform-Classes")).isEqualTo("true");
    }
  }
}
