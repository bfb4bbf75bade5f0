package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The module graph of docs/DESIGN.md section 3, kept true: every production dependency between the project's own
 * modules is listed here, so a new one fails this test until the design (and this list) says it is meant.
 */
class ModuleGraphTest {
  private static final Path ROOT = Path.of("../..");
  private static final Pattern ARTIFACT = Pattern.compile("<artifactId>(.*?)</artifactId>");
  private static final Pattern DEPENDENCY = Pattern.compile(
      "<dependency>\\s*<groupId>(.*?)</groupId>\\s*<artifactId>(.*?)</artifactId>(.*?)</dependency>", Pattern.DOTALL);

  /** module -> the project modules it depends on outside test scope (provided included: advice is compiled on it). */
  private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
      Map.entry("fencing-protocol", Set.of()),
      Map.entry("fencing-api", Set.of()),
      Map.entry("fencing-agent-bootstrap", Set.of("fencing-protocol")),
      Map.entry("fencing-fence-store", Set.of("fencing-protocol")),
      Map.entry("fencing-fence-sql", Set.of("fencing-protocol", "fencing-fence-store")),
      Map.entry("fencing-fence-http", Set.of("fencing-protocol", "fencing-fence-store")),
      Map.entry("fencing-fence-kafka", Set.of("fencing-protocol", "fencing-fence-store")),
      // Not a fence but their Spring Boot wiring: it configures the HTTP and Kafka fences, and nothing depends on it.
      Map.entry("fencing-fence-spring-boot-starter", Set.of("fencing-protocol", "fencing-fence-store",
          "fencing-fence-http", "fencing-fence-kafka")),
      Map.entry("fencing-agent-instrumentation-api", Set.of("fencing-agent-bootstrap", "fencing-protocol")),
      Map.entry("fencing-agent-core", Set.of("fencing-agent-bootstrap", "fencing-protocol", "fencing-fence-sql",
          "fencing-agent-instrumentation-api", "fencing-outbox")),
      Map.entry("fencing-agent-otel-extension", Set.of()),
      // The outbox relay and writer: the protocol only; the agent jar runs its command.
      Map.entry("fencing-outbox", Set.of("fencing-protocol")),
      // The outbox's Spring bean: the writer's one-line inserts, on the application's Spring.
      Map.entry("fencing-outbox-spring", Set.of("fencing-outbox")),
      Map.entry("fencing-test-harness", Set.of()),
      Map.entry("fencing-isolation-app", Set.of()),
      Map.entry("fencing-sample-ledger-worker", Set.of()),
      // Its outbox profile defers a webhook through the outbox's Spring bean; no other fencing code.
      Map.entry("fencing-sample-spring-replicas", Set.of("fencing-outbox-spring")),
      Map.entry("fencing-sample-inventory-service", Set.of("fencing-fence-http")),
      Map.entry("fencing-sample-audit-consumer", Set.of("fencing-fence-kafka")),
      Map.entry("fencing-demo", Set.of("fencing-test-harness", "fencing-fence-sql")),
      Map.entry("fencing-faults", Set.of("fencing-test-harness", "fencing-fence-sql", "fencing-fence-http",
          "fencing-fence-kafka")),
      Map.entry("fencing-benchmarks", Set.of("fencing-agent-bootstrap", "fencing-agent-core",
          "fencing-instrumentation-http-common", "fencing-instrumentation-jdbc",
          "fencing-instrumentation-kafka-clients", "fencing-outbox", "fencing-test-harness",
          "fencing-fence-sql")),
      Map.entry("fencing-dashboards", Set.of()),
      // Tests only: Debezium capturing the outbox table; nothing depends on it.
      Map.entry("fencing-outbox-cdc", Set.of()),
      // Test scope only: the agent-jar integration tests.
      Map.entry("fencing-agent-it", Set.of()));

  /** The HTTP client instrumentations: the modules that share instrumentation/http-common's hook. */
  private static final Set<String> HTTP_CLIENTS = Set.of("fencing-instrumentation-java-http-client",
      "fencing-instrumentation-http-url-connection", "fencing-instrumentation-apache-httpclient-5.0",
      "fencing-instrumentation-apache-httpclient-4.5", "fencing-instrumentation-okhttp-4.0",
      "fencing-instrumentation-reactor-netty-1.2");

  /** The fences' Spring Boot starter: the one fence-named module that builds on fences (and stays off the agent). */
  private static final String STARTER = "fencing-fence-spring-boot-starter";

  @Test
  void everyProductionDependencyBetweenModulesIsOneTheDesignMeans() throws IOException {
    Map<String, Set<String>> graph = graph();
    assertThat(graph).as("modules found").containsKeys("fencing-agent-core", "fencing-fence-kafka", STARTER,
        "fencing-instrumentation-jdbc", "fencing-protocol", "fencing-fence-store");
    for (Map.Entry<String, Set<String>> e : graph.entrySet()) {
      String module = e.getKey();
      Set<String> deps = e.getValue();
      if (module.startsWith("fencing-library-")) {
        // testing/library-versions: one library version each, nothing of ours
        assertThat(deps).as(module).isEmpty();
      } else if (module.equals("fencing-instrumentation-testing")) {
        // the instrumentations' test tooling weaves with the core's transformer
        assertThat(deps).as(module).isSubsetOf("fencing-agent-bootstrap", "fencing-agent-core");
      } else if (module.startsWith("fencing-instrumentation-")) {
        // an instrumentation builds on the bootstrap part and the instrumentation API only, never on the core nor on
        // another instrumentation; the HTTP clients share the HTTP hook; the application API's bridge compiles its
        // advice against the API, which it instruments as its library
        assertThat(deps).as(module).isSubsetOf("fencing-agent-bootstrap", "fencing-agent-instrumentation-api",
            "fencing-instrumentation-http-common", "fencing-api");
        if (deps.contains("fencing-api")) {
          assertThat(module).as("only the API's bridge depends on the API").isEqualTo("fencing-instrumentation-fencing-api");
        }
        if (deps.contains("fencing-instrumentation-http-common")) {
          assertThat(HTTP_CLIENTS).as(module + " depends on the shared HTTP hook").contains(module);
        }
      } else if (module.equals("fencing-agent") || module.equals("fencing-parent")) {
        // the jar assembles everything; the parent manages versions
        assertThat(deps).as(module).allMatch(d -> !d.equals("fencing-agent"));
      } else {
        assertThat(ALLOWED).as("a module docs/DESIGN.md section 3 does not know: " + module).containsKey(module);
        assertThat(deps).as(module + " depends on").isEqualTo(ALLOWED.get(module));
      }
      if (module.startsWith("fencing-fence-") && !module.equals(STARTER)) {
        assertThat(deps).as(module + ": a fence stands alone, without the agent")
            .noneMatch(d -> d.startsWith("fencing-agent") || d.startsWith("fencing-instrumentation-"));
        // each fence builds on the protocol and the shared store only, never on another fence
        assertThat(deps).as(module + ": a fence depends on no other fence")
            .allMatch(d -> d.equals("fencing-protocol") || d.equals("fencing-fence-store"));
      }
      if (module.equals(STARTER)) {
        assertThat(deps).as(module + ": the starter wires the fences, never the agent")
            .noneMatch(d -> d.startsWith("fencing-agent") || d.startsWith("fencing-instrumentation-"));
      }
      if (module.equals("fencing-protocol")) {
        assertThat(deps).as("the protocol depends on nothing of ours").isEmpty();
      }
      if (module.equals("fencing-api")) {
        assertThat(deps).as("the application API depends on nothing of ours").isEmpty();
      }
    }
  }

  private static Map<String, Set<String>> graph() throws IOException {
    Map<String, Set<String>> graph = new TreeMap<>();
    try (Stream<Path> poms = Files.walk(ROOT)) {
      for (Path pom : (Iterable<Path>) poms.filter(p -> p.getFileName().toString().equals("pom.xml"))
          .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/node_modules/"))::iterator) {
        String xml = Files.readString(pom).replaceAll("(?s)<parent>.*?</parent>", "")
            .replaceAll("(?s)<dependencyManagement>.*?</dependencyManagement>", "")
            .replaceAll("(?s)<!--.*?-->", "");
        Matcher a = ARTIFACT.matcher(xml);
        if (!a.find()) {
          continue;
        }
        Set<String> deps = new TreeSet<>();
        Matcher d = DEPENDENCY.matcher(xml);
        while (d.find()) {
          boolean ours = d.group(1).equals("dev.fencing") || d.group(1).equals("${project.groupId}");
          if (ours && !d.group(3).contains("<scope>test</scope>")) {
            deps.add(d.group(2));
          }
        }
        graph.put(a.group(1), deps);
      }
    }
    return graph;
  }
}
