package dev.fencing.dashboards;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigLoader;
import java.io.File;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kubernetes example (deploy/kubernetes/): kubectl reads every manifest, and the pieces fit together as the agent
 * needs them: the jar the init container copies is the one -javaagent names, the properties file the ConfigMap holds
 * is the one FENCING_CONFIG_FILE names and loads without a problem or warning, the password file is where the Secret
 * is mounted, and probes and scraping use the port the agent listens on, on an address they can reach.
 */
class KubernetesManifestsTest {
  private static final Path DIR = DashboardFiles.DIR.resolve("../deploy/kubernetes").normalize();
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  /**
   * kubectl without a cluster: {@code apply --dry-run=client} still asks the API server to map each kind to its
   * resource (it fails with "unable to recognize ... connection refused", also with --validate=false), so the test
   * uses kubectl's local mode, which decodes the same files with the same client code and names each object.
   */
  @Test
  void kubectlReadsEveryManifestAndNamesEachObject() {
    assertThat(kubectl("annotate", "--local", "--dry-run=client", "-f", DIR.toString(), "fencing.dev/checked=true",
        "-o", "name")).containsExactly("configmap/ledger-worker-fencing", "deployment.apps/ledger-worker",
        "secret/ledger-worker-etcd", "service/ledger-worker-fencing");
    assertThat(kubectl("annotate", "--local", "--dry-run=client", "-f", DIR.resolve("prometheus-operator").toString(),
        "fencing.dev/checked=true", "-o", "name"))
        .containsExactly("servicemonitor.monitoring.coreos.com/ledger-worker-fencing");
  }

  @Test
  void theJarTheInitContainerCopiesIsTheOneJavaToolOptionsAttaches() {
    JsonNode pod = read("deployment.yaml").at("/spec/template/spec");
    JsonNode init = pod.at("/initContainers/0");
    List<String> cp = strings(init.at("/command"));
    assertThat(cp).hasSize(3).startsWith("cp");
    String copied = cp.get(2);
    String initMount = mountPath(init, "fencing-agent");
    assertThat(copied).startsWith(initMount + "/");

    JsonNode app = pod.at("/containers/0");
    assertThat(env(app, "JAVA_TOOL_OPTIONS")).isEqualTo("-javaagent:" + mountPath(app, "fencing-agent")
        + copied.substring(initMount.length()));
    assertThat(volume(pod, "fencing-agent").has("emptyDir")).isTrue();
  }

  @Test
  void theConfigMapsPropertiesAreTheConfigFileAndLoadWithoutProblemsOrWarnings(@TempDir Path tmp) throws Exception {
    JsonNode pod = read("deployment.yaml").at("/spec/template/spec");
    JsonNode app = pod.at("/containers/0");
    JsonNode configMap = read("configmap.yaml");
    JsonNode configMount = mount(app, "fencing-config");
    assertThat(volume(pod, "fencing-config").at("/configMap/name").asText())
        .isEqualTo(configMap.at("/metadata/name").asText());
    assertThat(env(app, "FENCING_CONFIG_FILE")).isEqualTo(configMount.get("mountPath").asText());
    String properties = configMap.at("/data").get(configMount.get("subPath").asText()).asText();

    // The password file is the Secret's key, mounted where fencing.etcd.password-file points.
    Properties p = new Properties();
    p.load(new StringReader(properties));
    JsonNode secret = read("secret.yaml");
    assertThat(volume(pod, "etcd-password").at("/secret/secretName").asText())
        .isEqualTo(secret.at("/metadata/name").asText());
    String passwordKey = secret.at("/stringData").fieldNames().next();
    assertThat(p.getProperty("fencing.etcd.password-file"))
        .isEqualTo(mountPath(app, "etcd-password") + "/" + passwordKey);

    // The agent's own loader, as in the pod (the file paths made local: the password file must be readable).
    Path file = Files.writeString(tmp.resolve("fencing.properties"), properties);
    Path password = Files.writeString(tmp.resolve(passwordKey), secret.at("/stringData/" + passwordKey).asText());
    Properties system = new Properties();
    system.setProperty("fencing.etcd.password-file", password.toString());
    AgentConfig config = ConfigLoader.load("", system, Map.of("FENCING_CONFIG_FILE", file.toString()));
    assertThat(config.problems()).isEmpty();
    assertThat(config.warnings()).isEmpty();
    assertThat(config.lock()).isEqualTo("ledger");
    assertThat(config.httpHost()).as("probes and Prometheus reach the pod IP").isEqualTo("0.0.0.0");

    // Probes and scraping use the agent's port.
    JsonNode port = app.at("/ports/0");
    assertThat(port.get("containerPort").asInt()).isEqualTo(config.httpPort());
    String portName = port.get("name").asText();
    assertThat(app.at("/readinessProbe/httpGet/port").asText()).isEqualTo(portName);
    assertThat(app.at("/readinessProbe/httpGet/path").asText()).isEqualTo("/ready");
    assertThat(app.at("/livenessProbe/httpGet/port").asText()).isEqualTo(portName);
    assertThat(app.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/live");
    // A standby replica stays ready: with only the holder ready, a rolling update would wait forever for a new pod.
    assertThat(config.readyRequiresHolding()).isFalse();
    JsonNode annotations = read("deployment.yaml").at("/spec/template/metadata/annotations");
    assertThat(annotations.get("prometheus.io/scrape").asText()).isEqualTo("true");
    assertThat(annotations.get("prometheus.io/port").asInt()).isEqualTo(config.httpPort());
    assertThat(annotations.get("prometheus.io/path").asText()).isEqualTo("/metrics");
  }

  @Test
  void theServiceSelectsThePodsAndTheServiceMonitorScrapesItsStatusPort() {
    JsonNode deployment = read("deployment.yaml");
    JsonNode service = read("service.yaml");
    JsonNode monitor = read("prometheus-operator/servicemonitor.yaml");
    JsonNode podLabels = deployment.at("/spec/template/metadata/labels");
    service.at("/spec/selector").fields().forEachRemaining(e ->
        assertThat(podLabels.path(e.getKey()).asText()).as("pod label %s", e.getKey()).isEqualTo(e.getValue().asText()));
    JsonNode serviceLabels = service.at("/metadata/labels");
    monitor.at("/spec/selector/matchLabels").fields().forEachRemaining(e ->
        assertThat(serviceLabels.path(e.getKey()).asText()).as("service label %s", e.getKey())
            .isEqualTo(e.getValue().asText()));
    String containerPort = deployment.at("/spec/template/spec/containers/0/ports/0/name").asText();
    assertThat(service.at("/spec/ports/0/targetPort").asText()).isEqualTo(containerPort);
    assertThat(monitor.at("/spec/endpoints/0/port").asText()).isEqualTo(service.at("/spec/ports/0/name").asText());
    assertThat(monitor.at("/spec/endpoints/0/path").asText()).isEqualTo("/metrics");
  }

  // ---- helpers ----

  private static JsonNode read(String name) {
    try {
      return YAML.readTree(DIR.resolve(name).toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  private static JsonNode mount(JsonNode container, String volume) {
    for (JsonNode m : container.path("volumeMounts")) {
      if (m.path("name").asText().equals(volume)) {
        return m;
      }
    }
    return fail("container " + container.path("name").asText() + " does not mount volume " + volume);
  }

  private static String mountPath(JsonNode container, String volume) {
    return mount(container, volume).get("mountPath").asText();
  }

  private static JsonNode volume(JsonNode pod, String name) {
    for (JsonNode v : pod.path("volumes")) {
      if (v.path("name").asText().equals(name)) {
        return v;
      }
    }
    return fail("the pod has no volume " + name);
  }

  private static String env(JsonNode container, String name) {
    for (JsonNode e : container.path("env")) {
      if (e.path("name").asText().equals(name)) {
        return e.path("value").asText();
      }
    }
    return fail("container " + container.path("name").asText() + " sets no " + name);
  }

  /** Runs the installed kubectl (no cluster needed); a missing kubectl fails the test with how to install it. */
  private static List<String> kubectl(String... args) {
    Path binary = null;
    String configured = System.getenv("KUBECTL");
    if (configured != null && !configured.isBlank()) {
      binary = Path.of(configured);
    } else {
      for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
        Path p = Path.of(dir.isEmpty() ? "." : dir, "kubectl");
        if (Files.isExecutable(p)) {
          binary = p;
          break;
        }
      }
    }
    if (binary == null || !Files.isExecutable(binary)) {
      return fail("kubectl is not on PATH (or KUBECTL is not an executable): the Kubernetes example is checked with it."
          + " Install it with 'apt-get update && apt-get install -y kubernetes-client' (Debian), or see"
          + " https://kubernetes.io/docs/tasks/tools/, or set KUBECTL to its path");
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(binary.toString());
    cmd.addAll(List.of(args));
    try {
      // No kubeconfig of the user's: local mode must not need one, and must not touch a real cluster.
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
      pb.environment().put("KUBECONFIG", "/dev/null");
      Process p = pb.start();
      p.getOutputStream().close();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return fail("kubectl " + String.join(" ", args) + " did not finish within 60 s");
      }
      assertThat(p.exitValue()).as("kubectl %s:%n%s", String.join(" ", args), out).isZero();
      return out.lines().filter(l -> !l.isBlank()).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
