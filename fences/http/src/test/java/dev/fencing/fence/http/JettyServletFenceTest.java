package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.protocol.Rejection;
import dev.fencing.protocol.TokenHeaders;
import java.io.BufferedInputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The contract through Jetty 12 (ee10, Servlet 6) and {@link FenceServletFilter}. */
class JettyServletFenceTest extends HttpFenceContractTest {

  @Override
  FencedServer start(HttpFence fence) throws Exception {
    return FencedServer.jetty(new FenceServletFilter(fence), Map.of(), backend);
  }

  @Test
  void aRefusedRequestWithALongBodyIsAnsweredWithConnectionClose() throws Exception {
    HttpFence fence = fence(policy());
    FencedServer s = serve(fence);
    assertThat(post(s, 5).statusCode()).isEqualTo(200);
    int length = FenceServletFilter.DISCARD_LIMIT + 1;
    try (Socket socket = new Socket(s.uri().getHost(), s.uri().getPort())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(rawPost(s, 3, length).getBytes(StandardCharsets.US_ASCII));
      out.write(new byte[length]);
      out.flush();
      RawResponse refused = RawResponse.read(new BufferedInputStream(socket.getInputStream()));
      assertThat(refused.status()).isEqualTo(409);
      assertThat(refused.closes()).as("Connection: close, the body was left unread").isTrue();
    }
    assertThat(fence.store().current(LOCK)).isEqualTo(5);
  }

  @Test
  void aFilterDeclaredWithInitParametersBuildsItsOwnFence() throws Exception {
    FenceServletFilter filter = new FenceServletFilter();
    try (FencedServer s = FencedServer.jetty(filter, Map.of("locks", "ledger,billing", "paths", "/api",
        "methods", "POST,PUT", "strict", "false"), backend)) {
      assertThat(filter.fence().policy().locks()).containsExactly("ledger", "billing");
      assertThat(post(s, 4).statusCode()).isEqualTo(200);
      assertThat(send(request(s, "POST", "/api/x", TokenHeaders.TOKEN, "2", TokenHeaders.LOCK, "billing"))
          .statusCode()).isEqualTo(200);
      assertThat(post(s, 3).statusCode()).isEqualTo(409);
      assertThat(send(request(s, "DELETE", "/api/x")).statusCode()).isEqualTo(200);
      HttpResponse<String> unknown = send(request(s, "PUT", "/api/x", TokenHeaders.TOKEN, "2"));
      assertThat(unknown.statusCode()).isEqualTo(400);
      assertThat(filter.fence().metrics().count(FenceMetrics.UNKNOWN_LOCK, Rejection.UNKNOWN_LOCK)).isEqualTo(1);
      assertThat(filter.fence().store().current("ledger")).isEqualTo(4);
      assertThat(filter.fence().store().current("billing")).isEqualTo(2);
    }
  }
}
