package dev.fencing.agent.cli;

import dev.fencing.agent.config.AgentConfig;
import dev.fencing.agent.config.ConfigKey;
import dev.fencing.agent.config.ConfigLoader;
import dev.fencing.agent.lease.LeaseProviders;
import dev.fencing.agent.lease.LeaseProvider;
import dev.fencing.agent.log.AgentLog;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Optional;

/**
 * {@code java -jar fencing-agent.jar <command>}: doctor, attach, sql, fence, outbox, config, --version, --help. Returns
 * the process exit code.
 */
public final class Cli {
  private Cli() {}

  public static int run(String[] args) {
    return run(args, System.out);
  }

  static int run(String[] args, PrintStream out) {
    String command = args.length == 0 ? "--help" : args[0];
    String[] rest = Arrays.copyOfRange(args, Math.min(1, args.length), args.length);
    switch (command) {
      case "doctor":
        return doctorWithReport(rest, out);
      case "report":
        return ReportCli.run(rest, out);
      case "attach":
        return AttachCli.run(rest, out, Cli::doctor);
      case "sql":
        return dev.fencing.fence.sql.SqlFenceCli.run(rest, out);
      case "fence":
        return FenceResetCli.run(rest, out);
      case "outbox":
        return dev.fencing.outbox.OutboxCli.run(rest, out);
      case "--version":
      case "version":
        out.println(dev.fencing.agent.status.BuildInfo.current("etcd").describe());
        return 0;
      case "config":
        out.print(ConfigKey.markdownTable());
        return 0;
      case "--help":
      case "-h":
      case "help":
        help(out);
        return 0;
      default:
        out.println("unknown command '" + command + "'");
        help(out);
        return 2;
    }
  }

  private static void help(PrintStream out) {
    out.println("Fencing Agent: fences every side effect of a JVM with the token of its etcd lease.");
    out.println();
    out.println("As an agent:  java -javaagent:fencing-agent.jar=lock=<name>,etcd.endpoints=<urls> -jar app.jar");
    out.println("              (or -Dfencing.lock=..., FENCING_LOCK=..., fencing.config.file=...)");
    out.println();
    out.println("Commands:     java -jar fencing-agent.jar <command> [key=value ...]");
    out.println("  doctor      check the configuration and etcd, show who holds the lock and its token; exit 0 if healthy, 1 if not");
    out.println("  report      report <status URL | saved status JSON> [--json] [--fail-on-unfenced]: the destinations the locks'");
    out.println("              side effects reached, fenced or not, and what to do; doctor --report <source> adds it to doctor");
    out.println("  attach      attach <pid> [key=value ...]: doctor's checks, then load the agent into that running JVM");
    out.println("  sql         print, install or uninstall the SQL fence on a table: sql print|install|uninstall --help");
    out.println("  fence       fence reset: set a poisoned fence back to the coordinator's token, with an audit line: fence --help");
    out.println("  outbox      outbox relay: deliver the committed events of an outbox table (HTTP, Kafka): outbox --help");
    out.println("  config      print the configuration reference (Markdown)");
    out.println("  --version   print the agent's version (as in the jar's manifest), the Java and the coordinator");
    out.println("  --help      this text");
    out.println();
    out.println("key=value arguments use the agent's keys (lock=ledger etcd.endpoints=http://etcd:2379); system properties,");
    out.println("FENCING_* variables and fencing.config.file apply as for the agent.");
  }

  /** doctor, and with {@code --report <source>} the readiness report after it: exit 1 when either failed. */
  private static int doctorWithReport(String[] args, PrintStream out) {
    java.util.List<String> kv = new java.util.ArrayList<>();
    String source = null;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--report")) {
        if (i + 1 >= args.length) {
          out.println("doctor: --report needs the agent's status URL or a saved /status JSON file");
          return 2;
        }
        source = args[++i];
      } else if (args[i].startsWith("--report=")) {
        source = args[i].substring("--report=".length());
      } else {
        kv.add(args[i]);
      }
    }
    int doctor = doctor(kv.toArray(new String[0]), out);
    if (source == null) {
      return doctor;
    }
    out.println();
    int report = ReportCli.run(new String[] {source}, out);
    return doctor != 0 ? doctor : report == 0 ? 0 : 1;
  }

  static int doctor(String[] kv, PrintStream out) {
    AgentConfig config = ConfigLoader.load(String.join(",", kv));
    boolean ok = true;
    out.println("configuration:");
    for (ConfigKey k : ConfigKey.values()) {
      if (k == ConfigKey.INSTRUMENTATION_ENABLED) {
        continue;
      }
      out.printf("  %-28s %s (%s)%n", k.property(), k == ConfigKey.LOCK ? config.lock() : config.display(k), config.sourceOf(k));
    }
    for (String w : config.warnings()) {
      out.println("  WARNING " + w);
    }
    if ("false".equals(config.display(ConfigKey.ENABLED))) {
      out.println("  NOTE " + ConfigKey.ENABLED.property() + "=false (" + config.sourceOf(ConfigKey.ENABLED)
          + "): the agent stays out of a JVM with these settings");
    }
    if (config.valid()) {
      out.println("  OK");
    } else {
      ok = false;
      for (String p : config.problems()) {
        out.println("  PROBLEM " + p);
      }
    }
    boolean zk = config.coordinator() == dev.fencing.agent.config.AgentConfig.Coordinator.ZOOKEEPER;
    out.println(zk ? "ZooKeeper " + config.display(ConfigKey.ZOOKEEPER_CONNECT) + " (path "
        + config.display(ConfigKey.ZOOKEEPER_PATH) + "):" : "etcd " + config.display(ConfigKey.ETCD_ENDPOINTS) + ":");
    long start = System.nanoTime();
    try (LeaseProvider etcd = LeaseProviders.create(config)) {
      long clusterId = etcd.clusterId(config.etcdTimeout());
      out.printf("  OK: cluster %s answered in %d ms%n", Long.toHexString(clusterId), (System.nanoTime() - start) / 1_000_000);
      // Every lock this JVM would campaign for: the JVM-wide one and each section's.
      for (String lock : config.locks()) {
        Optional<LeaseProvider.Holder> h = etcd.holder(lock, config.etcdTimeout());
        String scope = scopeOf(config, lock);
        if (h.isPresent()) {
          LeaseProvider.Holder holder = h.get();
          if (zk) {
            // A ZooKeeper session's remaining time is not visible to other clients.
            out.printf("lock '%s' (%s): held by %s with fencing token %d (czxid 0x%s, session %s)%n", lock, scope,
                holder.holderId, holder.token, Long.toHexString(holder.token), Long.toHexString(holder.leaseId));
          } else {
            out.printf("lock '%s' (%s): held by %s with fencing token %d (lease %s, %d s left)%n", lock, scope,
                holder.holderId, holder.token, Long.toHexString(holder.leaseId), holder.remainingTtlSeconds);
          }
        } else {
          out.printf("lock '%s' (%s): not held%n", lock, scope);
        }
      }
    } catch (Exception e) {
      ok = false;
      out.println("  PROBLEM cannot reach etcd within " + config.display(ConfigKey.ETCD_TIMEOUT) + ": " + AgentLog.describe(e));
    }
    out.println(ok ? "doctor: OK" : "doctor: FAILED");
    return ok ? 0 : 1;
  }

  /** "JVM-wide", "sections a.B#m, c.D#n", or both. */
  private static String scopeOf(dev.fencing.agent.config.AgentConfig config, String lock) {
    java.util.List<String> sections = new java.util.ArrayList<>();
    for (dev.fencing.agent.instrumentation.api.SectionSpec s : config.sections()) {
      if (s.lock().equals(lock)) {
        sections.add(s.className() + "#" + s.method());
      }
    }
    String jvm = config.jvmWideLock() && lock.equals(config.lock()) ? "JVM-wide" : null;
    String sec = sections.isEmpty() ? null : "sections " + String.join(", ", sections);
    return jvm != null && sec != null ? jvm + ", " + sec : jvm != null ? jvm : sec;
  }
}
