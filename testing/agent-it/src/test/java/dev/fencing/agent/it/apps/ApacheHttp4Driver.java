package dev.fencing.agent.it.apps;

import java.net.URI;
import java.util.Arrays;
import java.util.function.Function;
import org.apache.http.Header;
import org.apache.http.HttpMessage;
import org.apache.http.client.methods.CloseableHttpResponse;
import org.apache.http.client.methods.HttpUriRequest;
import org.apache.http.client.methods.RequestBuilder;
import org.apache.http.entity.ContentType;
import org.apache.http.entity.StringEntity;
import org.apache.http.impl.client.CloseableHttpClient;
import org.apache.http.impl.client.HttpClients;
import org.apache.http.util.EntityUtils;

/**
 * One version of Apache HttpClient 4.x, loaded by {@link ApacheHttpApp} in its own class loader: the default client
 * (HttpClients.createDefault: default redirect strategy and DefaultHttpRequestRetryHandler, which retries a request
 * that failed before it was sent). Compiled against the oldest supported 4.5, so it links against every later one.
 *
 * <p>{@code SYNC <method> <url>} answers {@code STATUS <code> callerHeaders=[...]}, a failure {@code ERR <exception>:
 * <message>}. callerHeaders are the header names of the application's request object after the call.
 */
public final class ApacheHttp4Driver implements Function<String, String> {
  private final CloseableHttpClient client = HttpClients.createDefault();

  @Override
  public String apply(String command) {
    if (command.equals("VERSION")) {
      String jar = HttpClients.class.getProtectionDomain().getCodeSource().getLocation().getPath();
      return jar.substring(jar.lastIndexOf('/') + 1);
    }
    String[] p = command.split(" ");
    try {
      if (!p[0].equals("SYNC")) {
        throw new IllegalArgumentException("HttpClient 4.x has a classic client only: " + command);
      }
      RequestBuilder b = RequestBuilder.create(p[1]).setUri(URI.create(p[2])).setHeader("X-App", "1");
      if (!p[1].equals("GET")) {
        b.setEntity(new StringEntity("x", ContentType.TEXT_PLAIN));
      }
      HttpUriRequest request = b.build();
      int code;
      try (CloseableHttpResponse response = client.execute(request)) {
        EntityUtils.consume(response.getEntity());
        code = response.getStatusLine().getStatusCode();
      }
      return "STATUS " + code + " callerHeaders=" + names(request);
    } catch (Exception e) {
      return "ERR " + e.getClass().getName() + ": " + e.getMessage();
    }
  }

  private static String names(HttpMessage message) {
    return Arrays.toString(Arrays.stream(message.getAllHeaders()).map(Header::getName).toArray());
  }
}
