package dev.fencing.agent.bootstrap;

import java.lang.reflect.Method;

/**
 * What the capture advice reads of the application's lock libraries (Curator and its ZooKeeper client, jetcd), by
 * reflection on the objects the advice hands over. Reflection, not the libraries' types, because the agent jar bundles
 * its own, relocated ZooKeeper client and jetcd: the jar's relocation would rewrite every reference to
 * {@code org.apache.zookeeper} or {@code io.etcd} in the advice to the agent's private copies, which the application's
 * classes are not. Runs on acquisition, release and answered pings only, never per side effect. java.base only.
 */
public final class LockLibraries {
  private LockLibraries() {}

  /**
   * Curator's {@code LockInternals} now holds the lock node {@code ourPath} under {@code basePath}, through
   * {@code client} (a CuratorFramework): reads the node's czxid (the token) and its session with the application's
   * own client, and reports the acquisition. A node that is not this session's (or cannot be read) is not captured.
   */
  public static void curatorAcquired(Object client, String basePath, String ourPath) {
    try {
      long aliveAt = System.nanoTime(); // the server answers the read below: the session lives at least until then
      Object stat = call(call(client, "checkExists"), "forPath", ourPath);
      Object zk = call(call(client, "getZookeeperClient"), "getZooKeeper");
      long session = (Long) call(zk, "getSessionId");
      if (stat != null && (Long) call(stat, "getEphemeralOwner") == session) {
        Captures.acquired("curator", basePath, ourPath, (Long) call(stat, "getCzxid"), session, aliveAt,
            ((Integer) call(zk, "getSessionTimeout")).longValue());
      }
    } catch (Throwable t) {
      // not captured: the application's lock works as without the agent
    }
  }

  /**
   * An answered ping on the ZooKeeper connection {@code cnxn} (a ClientCnxn), sent at {@code sentAtNanos}: the
   * session was alive then.
   */
  public static void zooKeeperPingAnswered(Object cnxn, long sentAtNanos) {
    try {
      Captures.alive((Long) call(cnxn, "getSessionId"), sentAtNanos,
          ((Integer) call(cnxn, "getSessionTimeout")).longValue());
    } catch (Throwable t) {
      // the deadline is not extended: the captured lock expires, the safe side
    }
  }

  /** Calls the public no-argument or one-String-argument method {@code name} of {@code target}. */
  static Object call(Object target, String name, String... arg) throws Exception {
    Method m = arg.length == 0 ? target.getClass().getMethod(name) : target.getClass().getMethod(name, String.class);
    if (!m.canAccess(target)) {
      m.setAccessible(true); // a public method of a non-public implementation class, in the application's loader
    }
    return arg.length == 0 ? m.invoke(target) : m.invoke(target, (Object) arg[0]);
  }
}
