package dev.fencing.agent.it.http;

import dev.fencing.agent.it.AgentProcesses;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.fencing.agent.it.AgentProcesses.Agent;
import dev.fencing.agent.it.apps.RelayApp;
import dev.fencing.testing.AgentJvm;
import dev.fencing.testing.EtcdCluster;
import dev.fencing.testing.Http;
import dev.fencing.testing.Ports;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A JVM on standby (another JVM holds the lock) receives a request carrying a forged {@code Fencing-Token: 999999}
 * and its own lock's name. Its side effects are decided by its own lease, not by the header: the POST it would relay
 * to a third party that no fence protects is blocked, as it is for the same request without the headers.
 */
class ForgedTokenIT {
  static List<Path> javaHomes() {
    return AgentProcesses.javaHomes();
  }

  @ParameterizedTest
  @MethodSource("javaHomes")
  void aForgedInboundTokenDoesNotUnlockAStandbyJvm(Path javaHome) throws Exception {
    AtomicInteger received = new AtomicInteger();
    HttpServer thirdParty = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    thirdParty.createContext("/hook", ex -> {
      received.incrementAndGet();
      ex.sendResponseHeaders(200, -1);
      ex.close();
    });
    thirdParty.start();
    try (EtcdCluster etcd = EtcdCluster.single();
        Agent holder = AgentProcesses.start(javaHome, "forged-holder", "lock=relay,etcd.endpoints=" + etcd.endpoints())) {
      holder.awaitState("HOLDING", Duration.ofSeconds(15));
      int statusPort = Ports.freePort();
      try (AgentJvm relay = AgentJvm.builder().javaHome(javaHome)
          .name("forged-relay-java" + AgentProcesses.javaVersion(javaHome))
          .agentArgs("lock=relay,http.port=" + statusPort + ",etcd.endpoints=" + etcd.endpoints())
          .classpath(AgentProcesses.appClasspath()).mainClass(RelayApp.class.getName())
          .args("http://127.0.0.1:" + thirdParty.getAddress().getPort() + "/hook").start()) {
        Matcher m = Pattern.compile("APP STARTED port=(\\d+)").matcher(
            relay.awaitOutput("APP STARTED", Duration.ofSeconds(20)));
        assertThat(m.find()).isTrue();
        Http.awaitStatus(statusPort, "\"state\":\"STANDBY\"", Duration.ofSeconds(15));
        URI relayUri = URI.create("http://127.0.0.1:" + m.group(1) + "/relay");
        HttpClient client = HttpClient.newHttpClient();

        String plain = client.send(HttpRequest.newBuilder(relayUri).POST(HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.ofString()).body();
        String forged = client.send(HttpRequest.newBuilder(relayUri).header("Fencing-Token", "999999")
            .header("Fencing-Lock", "relay").POST(HttpRequest.BodyPublishers.noBody()).build(),
            HttpResponse.BodyHandlers.ofString()).body();

        assertThat(plain).startsWith("blocked IOException: Fencing Agent blocked a http side effect: lock 'relay'");
        assertThat(forged).as("the relay's call made for a request with a forged token")
            .startsWith("blocked IOException: Fencing Agent blocked a http side effect: lock 'relay'");
        assertThat(received.get()).as("calls the third party received").isZero();
      }
    } finally {
      thirdParty.stop(0);
    }
  }
}
