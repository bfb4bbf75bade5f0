package dev.fencing.agent.startup;

/**
 * Settings the agent chooses for the libraries it bundles (relocated into its own packages, so the application's copies
 * never see them). Set once in premain, before any of them loads; a value the operator already set wins.
 */
final class BundledLibraries {
  /**
   * Netty's JFR event support. On, Netty's first use (the etcd connection) loads JFR, ~100 classes and its metadata,
   * about 0.3 s of CPU in a JVM that may record nothing. The shade relocates this name together with Netty's own
   * reading of it, so it reaches the bundled Netty only.
   */
  static final String NETTY_JFR = "io.netty.jfr.enabled";

  /**
   * Netty's native transports: the agent's connections run on NIO ({@code EtcdTransport}, the ZooKeeper client), and
   * the jar carries no native library, so gRPC's probe for epoll would only search the library path and fail.
   */
  static final String NETTY_NO_NATIVE = "io.netty.transport.noNative";

  private BundledLibraries() {}

  static void configure() {
    setUnlessSet(NETTY_JFR, "false");
    setUnlessSet(NETTY_NO_NATIVE, "true");
  }

  private static void setUnlessSet(String key, String value) {
    try {
      if (System.getProperty(key) == null) {
        System.setProperty(key, value);
      }
    } catch (SecurityException e) {
      // a security manager that forbids it: the library's default stays
    }
  }
}
