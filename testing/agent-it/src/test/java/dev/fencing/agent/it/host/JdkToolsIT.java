package dev.fencing.agent.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.release.CliAndAttachIT;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code JAVA_TOOL_OPTIONS} carrying the agent reaches every JVM of a container, the JDK's own tools included. The
 * agent stays out of a JDK tool (and of the agent jar's own command line) unless {@code fencing.jdk-tools.enabled=true}:
 * no campaign, no line on the tool's standard output, nothing beyond the JVM's own "Picked up" line on its standard
 * error at the default log level.
 */
class JdkToolsIT {
  private static final String PICKED_UP = "Picked up JAVA_TOOL_OPTIONS:";

  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /** jshell runs a statement in a second JVM it launches itself: neither campaigns. */
  @ParameterizedTest
  @MethodSource("javaHomes")
  void jshellDoesNotCampaign(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single()) {
      Tool jshell = jshell(javaHome, etcd, "lock=tools,etcd.endpoints=" + etcd.endpoints());
      assertThat(jshell.keysSeen).as("lock keys in etcd while jshell ran (%s)", jshell).isEmpty();
      assertThat(jshell.exit).as("jshell exit (%s)", jshell).isZero();
      assertThat(jshell.stderrBeyondPickedUp()).as("jshell's standard error").isEmpty();
    }
  }

  /** The opt-in is the agent's own setting, the same on every Java: this build's; which JVMs are tools, on both. */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void jshellCampaignsWhenToolsAreOptedIn(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single()) {
      Tool jshell = jshell(javaHome, etcd, "lock=tools,jdk-tools.enabled=true,etcd.endpoints=" + etcd.endpoints());
      assertThat(jshell.keysSeen).as("lock keys in etcd while jshell ran (%s)", jshell)
          .anyMatch(k -> k.startsWith("/fencing/locks/tools"));
    }
  }

  /**
   * jcmd's standard output is what scripts parse: with the agent in JAVA_TOOL_OPTIONS it is the same as without, and
   * its standard error carries the JVM's "Picked up" line only. At debug level the agent says why it stayed out, on
   * standard error; with the opt-in its premain runs.
   */
  @ParameterizedTest
  @MethodSource("javaHomes")
  void jcmdOutputIsUntouchedAndTheAgentStaysOutUnlessOptedIn(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm target = AgentJvm.builder().javaHome(javaHome).name("jcmd-target-java"
                + AgentProcesses.javaVersion(javaHome)).noAgent().classpath(AgentProcesses.appClasspath())
            .mainClass(CliAndAttachIT.IdleApp.class.getName()).start()) {
      target.awaitOutput("IDLE", Duration.ofSeconds(20));
      String agent = "lock=tools,etcd.endpoints=" + etcd.endpoints();
      String[] jcmd = {"jcmd", Long.toString(target.pid()), "VM.version"};
      Tool plain = Tool.run(javaHome, null, null, null, jcmd);
      assertThat(plain.exit).as("jcmd without the agent (%s)", plain).isZero();
      assertThat(plain.stdout).contains(Long.toString(target.pid()));

      Tool withAgent = Tool.run(javaHome, agent, null, null, jcmd);
      assertThat(withAgent.exit).isZero();
      assertThat(withAgent.stdout).as("jcmd's standard output").isEqualTo(plain.stdout);
      assertThat(withAgent.stderr).as("jcmd's standard error").contains(PICKED_UP);
      assertThat(withAgent.stderrBeyondPickedUp()).as("jcmd's standard error").isEmpty();

      Tool debug = Tool.run(javaHome, agent + ",log.level=debug", null, null, jcmd);
      assertThat(debug.stdout).isEqualTo(plain.stdout);
      assertThat(debug.stderr).contains("[fencing-agent] DEBUG FencingAgent: not started in the JDK tool jdk.jcmd/sun.tools.jcmd.JCmd"
          + " (fencing.jdk-tools.enabled=true starts it)").doesNotContain("premain took");

      Tool optedIn = Tool.run(javaHome, agent + ",log.level=debug,jdk-tools.enabled=true", null, null, jcmd);
      assertThat(optedIn.exit).isZero();
      assertThat(optedIn.stderr).contains("premain took");
    }
  }

  /** {@code java -jar fencing-agent.jar ...} (doctor, attach) is the agent's own tool: never a host. */
  @ParameterizedTest
  @MethodSource("javaHomes")
  void theAgentsOwnCommandLineIsNotAHost(Path javaHome) throws Exception {
    String jar = Path.of(System.getProperty("fencing.agent.jar")).toAbsolutePath().toString();
    Tool version = Tool.run(javaHome, "lock=tools,log.level=debug,jdk-tools.enabled=true", null, null,
        "java", "-jar", jar, "--version");
    assertThat(version.exit).as("%s", version).isZero();
    assertThat(version.stdout).startsWith("fencing-agent ");
    assertThat(version.stderr).contains("[fencing-agent] DEBUG FencingAgent: not started in the agent's own command line")
        .doesNotContain("premain took");
  }

  private static Tool jshell(Path javaHome, EtcdCluster etcd, String agentArgs) throws Exception {
    return Tool.run(javaHome, agentArgs, etcd, "Thread.sleep(4000)\n/exit\n", "jshell", "-q");
  }

  /** One run of a JDK tool from {@code <javaHome>/bin}, with the agent in JAVA_TOOL_OPTIONS when agentArgs is set. */
  static final class Tool {
    int exit;
    String stdout;
    String stderr;
    final TreeSet<String> keysSeen = new TreeSet<>();

    static Tool run(Path javaHome, String agentArgs, EtcdCluster watched, String stdin, String... command)
        throws Exception {
      List<String> cmd = new ArrayList<>(List.of(command));
      cmd.set(0, javaHome.resolve("bin").resolve(command[0]).toString());
      Path dir = Files.createTempDirectory("fencing-tool-");
      ProcessBuilder b = new ProcessBuilder(cmd).redirectOutput(dir.resolve("out").toFile())
          .redirectError(dir.resolve("err").toFile());
      Map<String, String> env = b.environment();
      env.remove("JAVA_TOOL_OPTIONS");
      env.remove("JDK_JAVA_OPTIONS");
      if (agentArgs != null) {
        String jar = Path.of(System.getProperty("fencing.agent.jar")).toAbsolutePath().toString();
        env.put("JAVA_TOOL_OPTIONS", "-javaagent:" + jar + "=" + agentArgs);
      }
      Process p = b.start();
      Tool t = new Tool();
      try {
        if (stdin != null) {
          p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        p.getOutputStream().close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!p.waitFor(200, TimeUnit.MILLISECONDS)) {
          if (watched != null) {
            for (String line : watched.etcdctl("get", "--prefix", "/fencing/locks/", "--keys-only").split("\n")) {
              if (!line.isBlank()) {
                t.keysSeen.add(line.trim());
              }
            }
          }
          if (System.nanoTime() > deadline) {
            throw new AssertionError(cmd + " still running after 60 s; output in " + dir);
          }
        }
      } finally {
        p.destroyForcibly();
      }
      t.exit = p.waitFor();
      t.stdout = read(dir.resolve("out"));
      t.stderr = read(dir.resolve("err"));
      return t;
    }

    List<String> stderrBeyondPickedUp() {
      return stderr.lines().filter(l -> !l.startsWith(PICKED_UP) && !l.isBlank()).toList();
    }

    private static String read(Path file) throws IOException {
      return Files.readString(file, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
      return "exit " + exit + ", stdout:\n" + stdout + "\nstderr:\n" + stderr;
    }
  }
}
