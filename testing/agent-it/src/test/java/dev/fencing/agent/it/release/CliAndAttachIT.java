package dev.fencing.agent.it.release;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.tools.attach.VirtualMachine;
import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The jar's other entry points: the doctor CLI and dynamic attach to a running JVM. */
public class CliAndAttachIT {
  public static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  /**
   * The doctor command is the agent's own logic, the same on every Java: this build's (dynamic attach runs on both).
   */
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  private static AgentJvm cli(Path javaHome, String name, String... args) {
    return AgentJvm.builder().javaHome(javaHome).name(name + "-java" + AgentProcesses.javaVersion(javaHome)).noAgent()
        .executableJar(Path.of(System.getProperty("fencing.agent.jar"))).args(args).start();
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void doctorShowsTheHolderAndItsTokenAndExitsZero(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        Agent holder = AgentProcesses.start(javaHome, "doctor-holder", "lock=doc,etcd.endpoints=" + etcd.endpoints())) {
      holder.awaitState("HOLDING", Duration.ofSeconds(15));
      long token = holder.token();
      try (AgentJvm doctor = cli(javaHome, "doctor-ok", "doctor", "lock=doc", "etcd.endpoints=" + etcd.endpoints())) {
        assertThat(doctor.awaitExit(Duration.ofSeconds(30))).isZero();
        assertThat(doctor.output())
            .contains("fencing.lock")
            .contains("OK: cluster ")
            .contains("lock 'doc' (JVM-wide): held by doctor-holder with fencing token " + token)
            .contains("doctor: OK");
      }
    }
  }

  @ParameterizedTest
  @MethodSource("currentJava")
  void doctorFailsWithExitOneOnBadConfigOrUnreachableEtcd(Path javaHome) throws Exception {
    try (AgentJvm doctor = cli(javaHome, "doctor-bad", "doctor", "lock=doc", "lease.ttl=banana", "etcd.timeout=1s",
        "etcd.endpoints=http://127.0.0.1:" + Ports.freePort())) {
      assertThat(doctor.awaitExit(Duration.ofSeconds(30))).isEqualTo(1);
      assertThat(doctor.output())
          .contains("PROBLEM fencing.lease.ttl='banana'")
          .contains("PROBLEM cannot reach etcd within 1s")
          .contains("doctor: FAILED");
    }
    try (AgentJvm help = cli(javaHome, "help", "--help")) {
      assertThat(help.awaitExit(Duration.ofSeconds(30))).isZero();
      assertThat(help.output()).contains("doctor").contains("-javaagent:fencing-agent.jar");
    }
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void dynamicAttachToARunningJvmAcquiresTheLease(Path javaHome) throws Exception {
    int port = Ports.freePort();
    try (EtcdCluster etcd = EtcdCluster.single();
        AgentJvm app = AgentJvm.builder().javaHome(javaHome).name("attach-java" + AgentProcesses.javaVersion(javaHome))
            .noAgent().classpath(AgentProcesses.appClasspath()).mainClass(IdleApp.class.getName()).start()) {
      app.awaitOutput("IDLE", Duration.ofSeconds(20));
      VirtualMachine vm = VirtualMachine.attach(Long.toString(app.pid()));
      try {
        vm.loadAgent(System.getProperty("fencing.agent.jar"),
            "lock=attach,http.port=" + port + ",etcd.endpoints=" + etcd.endpoints());
      } finally {
        vm.detach();
      }
      String s = Http.awaitStatus(port, "\"state\":\"HOLDING\"", Duration.ofSeconds(15));
      assertThat(Long.parseLong(Http.jsonField(s, "token"))).isPositive();
    }
  }

  /** A running application with no agent, waiting to be attached to. */
  public static final class IdleApp {
    public static void main(String[] args) throws Exception {
      System.out.println("IDLE");
      System.out.flush();
      Thread.sleep(120_000);
    }
  }
}
