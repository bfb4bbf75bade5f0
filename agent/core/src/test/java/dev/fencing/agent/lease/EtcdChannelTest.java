package dev.fencing.agent.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.Client;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import org.junit.jupiter.api.Test;

/** The path to the gRPC channel under the bundled jetcd, which the lease keeper's reconnect depends on. */
class EtcdChannelTest {

  @Test
  void theBundledJetcdsChannelIsReachedAndItsBackoffReset() {
    assertThat(EtcdChannel.reachable()).as("jetcd's ClientImpl.connectionManager.getChannel()").isTrue();
    try (Client client = Client.builder().endpoints("http://127.0.0.1:1").build()) {
      ManagedChannel channel = EtcdChannel.of(client);
      assertThat(channel).isNotNull();
      assertThat(EtcdChannel.of(client)).as("the client's one channel").isSameAs(channel);
      EtcdChannel.reconnectNow(client);
      assertThat(channel.getState(false)).isNotEqualTo(ConnectivityState.SHUTDOWN);
    }
  }
}
