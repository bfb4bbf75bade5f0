package dev.fencing.agent.lease;

import dev.fencing.agent.log.AgentLog;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.impl.ClientImpl;
import io.grpc.ManagedChannel;
import java.lang.reflect.Field;
import java.lang.reflect.Method;

/**
 * Reaches the gRPC channel under a jetcd client to reset its reconnect backoff. When etcd is down, the channel's
 * connection attempts fail and gRPC waits 1 s, then 1.6 times longer after each failure, before its next one; jetcd
 * fails calls at once meanwhile (the agent builds it with {@code waitForReady(false)}), so an etcd that is back after
 * a few seconds was reached only 5-15 s later, whatever the lease keeper asked. jetcd does not expose its channel: it
 * sits in {@code ClientImpl.connectionManager.getChannel()}, read here by reflection on the agent's own bundled jetcd
 * (its version is the agent's, pinned by the build, and {@code EtcdChannelTest} fails if the path changes). Where the
 * path cannot be read, reconnecting does nothing and the channel keeps gRPC's own schedule. The same path sets the
 * channel the agent builds itself ({@link EtcdTransport}) before jetcd would create its own.
 */
final class EtcdChannel {
  private static final AgentLog LOG = AgentLog.get(EtcdChannel.class);
  private static final Field CONNECTION_MANAGER;
  private static final Method GET_CHANNEL;
  private static final Field MANAGED_CHANNEL;

  static {
    Field field = null;
    Method method = null;
    Field channel = null;
    try {
      field = ClientImpl.class.getDeclaredField("connectionManager");
      field.setAccessible(true);
      method = field.getType().getDeclaredMethod("getChannel");
      method.setAccessible(true);
      if (!ManagedChannel.class.isAssignableFrom(method.getReturnType())) {
        method = null;
      }
      channel = field.getType().getDeclaredField("managedChannel");
      channel.setAccessible(true);
      if (channel.getType() != ManagedChannel.class) {
        channel = null;
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.debug("cannot reach jetcd's channel (" + AgentLog.describe(e) + "): etcd reconnects on gRPC's backoff");
      field = null;
      method = null;
      channel = null;
    }
    CONNECTION_MANAGER = method == null ? null : field;
    GET_CHANNEL = method;
    MANAGED_CHANNEL = method == null ? null : channel;
  }

  private EtcdChannel() {
  }

  /** Whether the channel of a jetcd client can be reached (false would mean a jetcd this class does not know). */
  static boolean reachable() {
    return GET_CHANNEL != null;
  }

  /** Whether a channel can be given to a jetcd client before its first call ({@link #install}). */
  static boolean installable() {
    return MANAGED_CHANNEL != null;
  }

  /**
   * Gives {@code client}, which has made no call yet, {@code channel} as its one channel, so jetcd never builds its
   * own. Returns false, and shuts {@code channel} down, when the client cannot take it.
   */
  static boolean install(Client client, ManagedChannel channel) {
    if (MANAGED_CHANNEL != null && client instanceof ClientImpl) {
      try {
        Object manager = CONNECTION_MANAGER.get(client);
        if (MANAGED_CHANNEL.get(manager) == null) {
          MANAGED_CHANNEL.set(manager, channel);
          return true;
        }
      } catch (ReflectiveOperationException | RuntimeException e) {
        LOG.debug("cannot set jetcd's channel: " + AgentLog.describe(e));
      }
    }
    channel.shutdownNow();
    return false;
  }

  /**
   * The channel under {@code client}, or null when it cannot be reached. jetcd creates its channel on the first call;
   * this may create it.
   */
  static ManagedChannel of(Client client) {
    if (GET_CHANNEL == null || !(client instanceof ClientImpl)) {
      return null;
    }
    try {
      return (ManagedChannel) GET_CHANNEL.invoke(CONNECTION_MANAGER.get(client));
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.debug("cannot reach jetcd's channel: " + AgentLog.describe(e));
      return null;
    }
  }

  /**
   * Makes the channel of {@code client} try to connect now, rather than after its backoff. Cheap (a task on the
   * channel's executor) and a no-op for a connected channel.
   */
  static void reconnectNow(Client client) {
    ManagedChannel channel = of(client);
    if (channel != null && !channel.isShutdown()) {
      channel.resetConnectBackoff();
    }
  }
}
