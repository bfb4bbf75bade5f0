package dev.fencing.faults;

import dev.fencing.testing.Ports;
import dev.fencing.testing.TcpProxy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One worker's way to the resources: a harness-owned {@link TcpProxy} in front of each (PostgreSQL or PgBouncer,
 * MariaDB, the HTTP fence, the Kafka broker), so that the {@code delay} and {@code data-partition} faults can hold
 * one worker's bytes to one resource while everything else goes on. The harness's own reads go straight to the
 * resources.
 *
 * <p>Kafka needs one broker listener per worker: a client bootstraps through the proxy and then connects to the
 * addresses the broker advertises, so listener {@code Wn} advertises worker n's proxy port and the proxy forwards to
 * that listener ({@link Plan#brokerProperties()}, planned before the broker starts).
 */
final class DataPath implements AutoCloseable {
  static final List<String> RESOURCES = History.RESOURCES;
  private static final Pattern HOST_PORT = Pattern.compile("127\\.0\\.0\\.1:(\\d+)");

  /**
   * Every worker's Kafka proxy, listening before the broker starts: the broker advertises the proxy's port to the
   * worker, so the port is taken here, not picked now and bound after the broker's start (seconds in which another
   * process could take it). The proxy forwards to the worker's own broker listener, which the broker binds.
   */
  static final class Plan implements AutoCloseable {
    private final List<TcpProxy> kafka = new ArrayList<>();

    Plan(int workers) {
      for (int listenerPort : Ports.freePorts(workers)) {
        kafka.add(new TcpProxy(listenerPort));
      }
    }

    /** The loopback ports of the workers' Kafka proxies, which already listen. */
    List<Integer> kafkaProxyPorts() {
      return kafka.stream().map(TcpProxy::port).toList();
    }

    /** The broker's listeners: the harness's own ({@code PLAINTEXT}) and one per worker, advertised as its proxy. */
    Map<String, String> brokerProperties() {
      StringBuilder listeners = new StringBuilder("PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller.port}");
      StringBuilder advertised = new StringBuilder("PLAINTEXT://127.0.0.1:{port}");
      StringBuilder protocols = new StringBuilder("PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
      for (int i = 0; i < kafka.size(); i++) {
        String name = "W" + (i + 1);
        listeners.append(',').append(name).append("://127.0.0.1:").append(kafka.get(i).targetPort());
        advertised.append(',').append(name).append("://127.0.0.1:").append(kafka.get(i).port());
        protocols.append(',').append(name).append(":PLAINTEXT");
      }
      Map<String, String> props = new LinkedHashMap<>();
      props.put("listeners", listeners.toString());
      props.put("advertised.listeners", advertised.toString());
      props.put("listener.security.protocol.map", protocols.toString());
      // broker-kill: a restarted broker registers again under a new incarnation, which the controller refuses until
      // the killed one's session timed out (default 9 s): a short session lets it come back within a few seconds.
      props.put("broker.session.timeout.ms", "2000");
      props.put("broker.heartbeat.interval.ms", "500");
      return props;
    }

    /** Worker {@code index} (1-based)'s proxies in front of the resources of {@code setup}. */
    DataPath open(int index, FaultRun.Setup setup) {
      return new DataPath(setup, kafka.get(index - 1));
    }

    /** Closes the Kafka proxies, also those a worker's data path holds (closing one twice is harmless). */
    @Override
    public void close() {
      kafka.forEach(TcpProxy::close);
    }
  }

  private final Map<String, TcpProxy> proxies = new LinkedHashMap<>();
  private final String pgUrl;
  private final String mariaUrl;
  private final String httpUrl;

  private DataPath(FaultRun.Setup setup, TcpProxy kafka) {
    proxies.put("pg", new TcpProxy(port(setup.pgUrl())));
    proxies.put("mariadb", new TcpProxy(port(setup.mariaUrl())));
    proxies.put("http", new TcpProxy(port(setup.httpUrl())));
    proxies.put("kafka", kafka);
    pgUrl = via(setup.pgUrl(), "pg");
    mariaUrl = via(setup.mariaUrl(), "mariadb");
    httpUrl = via(setup.httpUrl(), "http");
  }

  String pgUrl() {
    return pgUrl;
  }

  String mariaUrl() {
    return mariaUrl;
  }

  String httpUrl() {
    return httpUrl;
  }

  /** {@code 127.0.0.1:<port>} of the HTTP proxy: the host the worker's agent fences. */
  String httpHostPort() {
    return "127.0.0.1:" + proxies.get("http").port();
  }

  String kafka() {
    return "127.0.0.1:" + proxies.get("kafka").port();
  }

  /** The proxy in front of {@code resource} (pg, mariadb, http, kafka). */
  TcpProxy proxy(String resource) {
    TcpProxy p = proxies.get(resource);
    if (p == null) {
      throw new IllegalArgumentException("no resource '" + resource + "', expected one of " + proxies.keySet());
    }
    return p;
  }

  /** Bytes each resource's proxy has forwarded (pg, mariadb, http, kafka). */
  Map<String, Long> forwarded() {
    Map<String, Long> out = new LinkedHashMap<>();
    proxies.forEach((resource, proxy) -> out.put(resource, proxy.forwarded()));
    return out;
  }

  @Override
  public void close() {
    proxies.values().forEach(TcpProxy::close);
  }

  private String via(String url, String resource) {
    Matcher m = HOST_PORT.matcher(url);
    if (!m.find()) {
      throw new IllegalArgumentException("no 127.0.0.1:<port> in " + url);
    }
    return url.substring(0, m.start()) + "127.0.0.1:" + proxies.get(resource).port() + url.substring(m.end());
  }

  static int port(String url) {
    Matcher m = HOST_PORT.matcher(url);
    if (!m.find()) {
      throw new IllegalArgumentException("no 127.0.0.1:<port> in " + url);
    }
    return Integer.parseInt(m.group(1));
  }
}
