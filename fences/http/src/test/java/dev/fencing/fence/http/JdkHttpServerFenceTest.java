package dev.fencing.fence.http;

/** The contract through the JDK's com.sun.net.httpserver and {@link FenceHttpFilter}. */
class JdkHttpServerFenceTest extends HttpFenceContractTest {

  @Override
  FencedServer start(HttpFence fence) throws Exception {
    return FencedServer.jdk(fence, backend);
  }
}
