package dev.fencing.agent.it.lease;

import dev.fencing.agent.it.AgentProcesses;
import dev.fencing.agent.it.jdbc.JdbcIT;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.EtcdNode;
import dev.fencing.testing.Http;
import dev.fencing.agent.it.jdbc.JdbcIT.JdbcJvm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What etcd failures do to a holder: a dead etcd ends the lease by the local deadline; a dead etcd leader does not;
 * an application's real writes follow the lease through etcd being absent at start, killed mid-run and back.
 */
class EtcdFailureIT {
  static List<Path> currentJava() {
    return List.of(AgentProcesses.javaHomes().get(0));
  }

  /**
   * The newest Java only for the cases about etcd itself (stopped, its leader killed, a standby through an outage):
   * they test the lease keeper's deadline and the bundled client's reconnects, the agent's own code, the same on every
   * Java. The case with an application's real writes runs on this build's Java, so the class covers both.
   */
  static List<Path> newestJava() {
    return AgentProcesses.newestJava();
  }

  @ParameterizedTest
  @MethodSource("newestJava")
  void holderLeavesHoldingByItsLocalDeadlineWhenEtcdStops(Path javaHome) throws Exception {
    try (EtcdCluster etcd = EtcdCluster.single();
        Agent agent = AgentProcesses.start(javaHome, "outage",
            "lock=outage,lease.ttl=4s,lease.safety-margin=500ms,shutdown.timeout=0s,etcd.endpoints="
                + etcd.endpoints())) {
      agent.awaitState("HOLDING", Duration.ofSeconds(15));
      long token = agent.token();

      // The deadline can only move forward while etcd answers; read it, then take etcd away.
      String before = agent.status();
      long stoppedAt = System.nanoTime();
      long remainingMs = Long.parseLong(Http.jsonField(before, "leaseRemainingMs"));
      for (EtcdNode node : etcd.nodes()) {
        node.kill();
      }

      long leftAt = 0;
      while (System.nanoTime() - stoppedAt < Duration.ofSeconds(10).toNanos()) {
        if (!"HOLDING".equals(agent.state())) {
          leftAt = System.nanoTime();
          break;
        }
        Thread.sleep(20);
      }
      assertThat(leftAt).as("left HOLDING at all").isNotZero();
      long heldMs = (leftAt - stoppedAt) / 1_000_000;
      // Not later than the deadline it reported just before the outage (+ slack for polling over HTTP on a busy
      // machine), nor much earlier (keepalives acknowledged before the outage keep it valid until then).
      assertThat(heldMs).isLessThanOrEqualTo(remainingMs + 400).isGreaterThanOrEqualTo(remainingMs - 1000);
      assertThat(heldMs).isLessThanOrEqualTo(4000 - 500 + 400);
      System.out.printf("etcd stopped: remaining %d ms at stop, left HOLDING after %d ms%n", remainingMs, heldMs);

      String after = agent.status();
      assertThat(Http.jsonField(after, "state")).isIn("EXPIRED", "LOST");
      assertThat(Http.jsonField(after, "token")).isEqualTo(Long.toString(token));
      Http.awaitStatus(agent.port, "\"lastLossReason\":\"keepalive_failed\"", Duration.ofSeconds(2));
      assertThat(agent.metrics()).contains("fencing_lease_held{lock=\"outage\"} 0.0")
          .contains("fencing_lease_losses_total{lock=\"outage\",reason=\"keepalive_failed\"} 1.0");
      Thread.sleep(100);
      assertThat(agent.lastDecision()).isEqualTo("BLOCK EXPIRED " + token);

      // etcd down a few seconds more, as in a restart that takes a while: gRPC's channel under jetcd has failed to
      // reconnect several times by then and would wait out its growing backoff (1 s, x1.6 per failure) before its
      // next try, whatever the agent asks.
      Thread.sleep(3000);
      // etcd back: the agent campaigns again and holds with a higher token, within its own retry interval (half the
      // TTL, 2 s here) plus a grant and a campaign: not after the channel's backoff (3.1-3.3 s without resetting it),
      // nor after its own old lease, which etcd's restart gave a full TTL again, lapses (4.7-4.8 s without revoking it).
      etcd.start();
      long backAt = System.nanoTime();
      String again = agent.awaitState("HOLDING", Duration.ofSeconds(20));
      long reheldMs = (System.nanoTime() - backAt) / 1_000_000;
      System.out.printf("etcd back: holding again after %d ms%n", reheldMs);
      assertThat(Long.parseLong(Http.jsonField(again, "token"))).isGreaterThan(token);
      assertThat(reheldMs).as("ms from etcd healthy again to HOLDING").isLessThan(3000);
    }
  }

  @ParameterizedTest
  @MethodSource("newestJava")
  void killingTheEtcdLeaderDoesNotLoseALeaseWhoseKeepalivesContinue(Path javaHome) throws Exception {
    String args = "lock=cluster,lease.ttl=6s,lease.safety-margin=500ms,etcd.endpoints=";
    try (EtcdCluster etcd = EtcdCluster.of(3);
        Agent holder = AgentProcesses.start(javaHome, "holder", args + etcd.endpoints())) {
      holder.awaitState("HOLDING", Duration.ofSeconds(15));
      try (Agent standby = AgentProcesses.start(javaHome, "standby", args + etcd.endpoints())) {
        standby.awaitState("STANDBY", Duration.ofSeconds(15));
        long token = holder.token();

        EtcdNode leader = etcd.leader();
        leader.kill();
        // Two TTLs: a lease whose keepalives stopped with the leader would be gone (and the holder out of HOLDING by
        // its local deadline) well before the end.
        long end = System.nanoTime() + Duration.ofSeconds(2 * 6).toNanos();
        int samples = 0;
        while (System.nanoTime() < end) {
          String s = holder.status();
          assertThat(Http.jsonField(s, "state")).as("holder after killing leader %s, sample %d", leader.name(), samples)
              .isEqualTo("HOLDING");
          assertThat(Http.jsonField(s, "token")).isEqualTo(Long.toString(token));
          assertThat(standby.state()).isNotEqualTo("HOLDING");
          samples++;
          Thread.sleep(100);
        }
        assertThat(holder.metrics()).doesNotContainPattern("fencing_lease_losses_total\\{[^}]*\\} [1-9]");

        // Tokens stay monotonic across holders: the holder exits (revoking its lease), the standby takes over
        // at once (not after the TTL) with a higher token.
        long closed = System.nanoTime();
        holder.close();
        String took = standby.awaitState("HOLDING", Duration.ofSeconds(5));
        assertThat((System.nanoTime() - closed) / 1_000_000).as("takeover after a clean exit, ms").isLessThan(6000);
        assertThat(Long.parseLong(Http.jsonField(took, "token"))).isGreaterThan(token);
      }
    }
  }

  /**
   * fail-mode=open lets side effects pass untagged when the agent cannot work at all. A standby that has reached etcd
   * and is campaigning while another JVM holds the lock is not broken: an etcd outage must leave it blocking, never
   * make it an untagged writer beside the holder.
   */
  @ParameterizedTest
  @MethodSource("newestJava")
  void aStandbyWithFailModeOpenKeepsBlockingThroughAnEtcdOutage(Path javaHome) throws Exception {
    String args = ",lease.ttl=2s,lease.safety-margin=500ms,etcd.timeout=1s,shutdown.timeout=0s,etcd.endpoints=";
    try (EtcdCluster etcd = EtcdCluster.single();
        Agent holder = AgentProcesses.start(javaHome, "blip-holder", "lock=blip" + args + etcd.endpoints())) {
      holder.awaitState("HOLDING", Duration.ofSeconds(15));
      try (Agent standby = AgentProcesses.start(javaHome, "blip-standby",
          "lock=blip,fail-mode=open" + args + etcd.endpoints())) {
        standby.awaitState("STANDBY", Duration.ofSeconds(15));
        Thread.sleep(100);
        assertThat(standby.lastDecision()).startsWith("BLOCK STANDBY");

        for (EtcdNode node : etcd.nodes()) {
          node.kill();
        }
        // Past the standby's own lease deadline and several etcd retries.
        long end = System.nanoTime() + Duration.ofSeconds(6).toNanos();
        while (System.nanoTime() < end) {
          assertThat(standby.state()).as("standby during the outage").isEqualTo("STANDBY");
          Thread.sleep(100);
        }
        assertThat(standby.field("detail")).contains("etcd unreachable");
        assertThat(standby.jvm.output()).as("decisions of the standby during the outage")
            .doesNotContainPattern("DECISION \\d+ PASS");
        assertThat(standby.lastDecision()).startsWith("BLOCK STANDBY");
      }
    }
  }

  /**
   * etcd absent when the applications start, then up, then SIGKILLed mid-run, then back: the applications never stop
   * answering; their writes are blocked (closed) or let through untagged (open) while the agent never held a lease,
   * carry the token while it holds one, are blocked with FN003 once the lease has expired (in both fail-modes: a lost
   * lease is no agent failure, docs/DESIGN.md section 4), and carry a new, higher token once etcd is back.
   */
  @ParameterizedTest
  @MethodSource("currentJava")
  void applicationWritesFollowTheLeaseThroughEtcdAbsentAtStartKilledMidRunAndBack(Path javaHome) throws Exception {
    String args = ",lease.ttl=3s,lease.safety-margin=500ms,etcd.timeout=1s,etcd.endpoints=";
    String url = "jdbc:h2:mem:outage;DB_CLOSE_DELAY=-1";
    try (EtcdCluster etcd = EtcdCluster.single()) {
      for (EtcdNode node : etcd.nodes()) {
        node.kill();
      }
      try (JdbcJvm closed = new JdbcJvm(javaHome, "outage-closed", "lock=outage-closed" + args + etcd.endpoints(), url,
              JdbcIT.classpath("fencing.it.h2.jar"));
          JdbcJvm open = new JdbcJvm(javaHome, "outage-open", "lock=outage-open,fail-mode=open" + args + etcd.endpoints(),
              url, JdbcIT.classpath("fencing.it.h2.jar"))) {
        Http.awaitStatus(closed.port, "\"state\":\"FAILED\"", Duration.ofSeconds(15));
        Http.awaitStatus(open.port, "\"state\":\"FAILED\"", Duration.ofSeconds(15));
        assertThat(closed.run("SQL CREATE TABLE t(v INT)")).startsWith("ERR FN003").contains("could not start");
        assertThat(open.run("SQL CREATE TABLE t(v INT)")).startsWith("OK");
        assertThat(open.run("SQL INSERT INTO t VALUES (1)")).isEqualTo("OK 1");
        assertThat(open.run("QUERY SELECT @fencing_token")).isEqualTo("ROW null"); // untagged

        etcd.start();
        long[] tokens = new long[2];
        int i = 0;
        for (JdbcJvm app : List.of(closed, open)) {
          tokens[i++] = Long.parseLong(Http.jsonField(
              Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(20)), "token"));
        }
        assertThat(closed.run("SQL CREATE TABLE t(v INT)")).startsWith("OK");
        i = 0;
        for (JdbcJvm app : List.of(closed, open)) {
          assertThat(app.run("SQL INSERT INTO t VALUES (2)")).isEqualTo("OK 1");
          assertThat(app.run("QUERY SELECT @fencing_token")).isEqualTo("ROW " + tokens[i++]);
        }

        for (EtcdNode node : etcd.nodes()) {
          node.kill();
        }
        i = 0;
        for (JdbcJvm app : List.of(closed, open)) {
          Http.awaitStatus(app.port, "\"state\":\"EXPIRED\"", Duration.ofSeconds(10));
          assertThat(app.run("SQL INSERT INTO t VALUES (3)")).startsWith("ERR FN003 Fencing Agent blocked a jdbc side "
              + "effect: lock 'outage-" + (i == 0 ? "closed" : "open") + "', token " + tokens[i]).contains("expired");
          assertThat(app.run("PREP DELETE FROM t")).startsWith("ERR FN003");
          assertThat(app.run("QUERY SELECT count(*) FROM t")).isEqualTo(i == 0 ? "ROW 1" : "ROW 2"); // reads go on
          i++;
        }

        etcd.start();
        i = 0;
        for (JdbcJvm app : List.of(closed, open)) {
          String again = Http.awaitStatus(app.port, "\"acquisitionsTotal\":2", Duration.ofSeconds(30));
          long newToken = Long.parseLong(Http.jsonField(again, "token"));
          assertThat(newToken).isGreaterThan(tokens[i++]);
          Http.awaitStatus(app.port, "\"state\":\"HOLDING\"", Duration.ofSeconds(10));
          assertThat(app.run("SQL INSERT INTO t VALUES (4)")).isEqualTo("OK 1");
          assertThat(app.run("QUERY SELECT @fencing_token")).isEqualTo("ROW " + newToken);
          assertThat(app.jvm.isAlive()).isTrue();
        }
        assertThat(Http.get("http://127.0.0.1:" + closed.port + "/metrics"))
            .contains("fencing_lease_losses_total{lock=\"outage-closed\",reason=\"keepalive_failed\"} 1.0");
      }
    }
  }
}
