package dev.fencing.agent;

import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import java.io.File;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.util.jar.JarFile;

/**
 * Entry point of {@code fencing-agent.jar}: {@code -javaagent} (premain), dynamic attach (agentmain) and the CLI
 * ({@code java -jar fencing-agent.jar doctor}). It only wires class loaders and hands over to the core; everything slow
 * (etcd, metrics, the HTTP endpoint) starts later on daemon threads.
 */
public final class FencingAgent {
  private static final String CORE_STARTER = "dev.fencing.agent.startup.AgentStarter";
  private static final String CORE_CLI = "dev.fencing.agent.cli.Cli";

  private FencingAgent() {}

  public static void premain(String args, Instrumentation inst) {
    start(args, inst, false);
  }

  public static void agentmain(String args, Instrumentation inst) {
    start(args, inst, true);
  }

  /** The CLI: {@code doctor}, {@code --help}. */
  public static void main(String[] args) throws Exception {
    JarFile jar = new JarFile(agentJar());
    ClassLoader loader = new AgentClassLoader(jar, agentJarUrl(), FencingAgent.class.getClassLoader());
    Thread.currentThread().setContextClassLoader(loader);
    int exit;
    try {
      exit = (Integer) loader.loadClass(CORE_CLI).getMethod("run", String[].class).invoke(null, (Object) args);
    } catch (InvocationTargetException e) {
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    }
    System.exit(exit);
  }

  private static void start(String args, Instrumentation inst, boolean dynamic) {
    long startNanos = System.nanoTime();
    try {
      JarFile jar = new JarFile(agentJar());
      // The bootstrap part must be visible to JDK classes (java.net.http, HttpURLConnection) that hooks run in.
      inst.appendToBootstrapClassLoaderSearch(jar);
      if (!Fencing.markStarted()) {
        System.err.println("[fencing-agent] WARN already attached to this JVM; ignoring the second attach");
        return;
      }
      ClassLoader loader = new AgentClassLoader(jar, agentJarUrl(), FencingAgent.class.getClassLoader());
      loader.loadClass(CORE_STARTER)
          .getMethod("start", String.class, Instrumentation.class, boolean.class, long.class)
          .invoke(null, args, inst, dynamic, startNanos);
    } catch (Throwable t) {
      Throwable cause = t instanceof InvocationTargetException ? t.getCause() : t;
      boolean open = "open".equalsIgnoreCase(failModeSetting(args));
      Fencing.installFallback(open ? Decision.pass("(unknown)") : Decision.block("(unknown)", 0, BlockReason.AGENT_FAILED));
      System.err.println("[fencing-agent] ERROR the agent failed to start (" + cause + "); the application runs on, "
          + (open ? "side effects pass untagged (fencing.fail-mode=open)" : "side effects are blocked (fencing.fail-mode=closed)"));
    }
  }

  /** fail-mode read without the core, for the one case where the core itself cannot load. */
  private static String failModeSetting(String args) {
    if (args != null) {
      for (String part : args.split(",")) {
        String p = part.trim();
        if (p.startsWith("fail-mode=") || p.startsWith("fencing.fail-mode=")) {
          return p.substring(p.indexOf('=') + 1).trim();
        }
      }
    }
    String prop = System.getProperty("fencing.fail-mode");
    return prop != null ? prop : System.getenv("FENCING_FAIL_MODE");
  }

  private static URL agentJarUrl() {
    return FencingAgent.class.getProtectionDomain().getCodeSource().getLocation();
  }

  private static File agentJar() throws Exception {
    return new File(agentJarUrl().toURI());
  }
}
