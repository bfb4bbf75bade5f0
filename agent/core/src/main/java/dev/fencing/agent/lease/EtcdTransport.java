package dev.fencing.agent.lease;

import dev.fencing.agent.threads.AgentThreads;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.ManagedChannel;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * The connection under the agent's jetcd client: one gRPC channel on one daemon event-loop thread of the agent
 * ({@code fencing-agent-etcd-1}), with the settings jetcd would give its own channel (endpoints and their name
 * resolution, round-robin over them, TLS, connect timeout, keepalive, authority, message size, interceptors).
 * jetcd builds that channel on a Vert.x instance, which starts an event loop, a blocked-thread checker, a DNS resolver
 * and Vert.x's event bus, file and shared-data machinery: about 300 classes and two threads in the application's JVM
 * for a connection gRPC's Netty transport makes alone. The client is given this channel before its first call (jetcd
 * creates its channel on the first call); jetcd's calls complete on the event loop, as they do on Vert.x's. jetcd
 * shuts the channel down with the client; {@link #close} then ends the event loop.
 */
final class EtcdTransport implements AutoCloseable {
  private final EventLoopGroup loop;
  private final Client client;

  private EtcdTransport(EventLoopGroup loop, Client client) {
    this.loop = loop;
    this.client = client;
  }

  /**
   * A client of {@code builder} on the agent's channel, or null when the bundled jetcd's channel cannot be set (a
   * jetcd this class does not know: {@link EtcdChannel#installable()}).
   */
  static EtcdTransport open(ClientBuilder builder) {
    if (!EtcdChannel.installable()) {
      return null;
    }
    EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, AgentThreads.factory("fencing-agent-etcd"),
        NioIoHandler.newFactory());
    try {
      Client client = builder.build();
      if (!EtcdChannel.install(client, channel(builder, loop))) {
        client.close();
        loop.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        return null;
      }
      return new EtcdTransport(loop, client);
    } catch (RuntimeException | Error e) {
      loop.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
      throw e;
    }
  }

  private static ManagedChannel channel(ClientBuilder b, EventLoopGroup loop) {
    NettyChannelBuilder c = NettyChannelBuilder.forTarget(b.target())
        .eventLoopGroup(loop)
        .channelType(NioSocketChannel.class)
        .directExecutor() // calls complete on the event loop, as on jetcd's Vert.x context
        .defaultLoadBalancingPolicy(b.loadBalancerPolicy() != null ? b.loadBalancerPolicy() : "round_robin");
    if (b.sslContext() != null) {
      c.negotiationType(NegotiationType.TLS).sslContext(b.sslContext());
    } else {
      c.negotiationType(NegotiationType.PLAINTEXT);
    }
    if (b.authority() != null) {
      c.overrideAuthority(b.authority());
    }
    if (b.maxInboundMessageSize() != null) {
      c.maxInboundMessageSize(b.maxInboundMessageSize());
    }
    if (b.keepaliveTime() != null) {
      c.keepAliveTime(b.keepaliveTime().toMillis(), TimeUnit.MILLISECONDS);
    }
    if (b.keepaliveTimeout() != null) {
      c.keepAliveTimeout(b.keepaliveTimeout().toMillis(), TimeUnit.MILLISECONDS);
    }
    if (b.keepaliveWithoutCalls() != null) {
      c.keepAliveWithoutCalls(b.keepaliveWithoutCalls());
    }
    if (b.connectTimeout() != null) {
      c.withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) b.connectTimeout().toMillis());
    }
    if (b.headers() != null && !b.headers().isEmpty()) {
      throw new IllegalArgumentException("extra gRPC headers are not set on the agent's etcd channel");
    }
    if (b.interceptors() != null) {
      c.intercept(b.interceptors());
    }
    return c.build();
  }

  Client client() {
    return client;
  }

  @Override
  public void close() {
    client.close(); // shuts the channel down
    loop.shutdownGracefully(0, 2, TimeUnit.SECONDS);
  }
}
