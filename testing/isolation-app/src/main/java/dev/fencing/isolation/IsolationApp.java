package dev.fencing.isolation;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.common.collect.ImmutableList;
import com.google.protobuf.Value;
import io.grpc.Metadata;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.opentelemetry.api.GlobalOpenTelemetry;
import java.util.Map;
import net.bytebuddy.ByteBuddy;
import org.slf4j.LoggerFactory;

/**
 * An ordinary application with its own, older versions of every library the agent bundles. It uses each one and
 * prints the jar each class came from: with the agent attached it must still be its own jar, and the agent's
 * relocated copies must be invisible to it.
 */
public final class IsolationApp {
  private IsolationApp() {}

  public static void main(String[] args) throws Exception {
    Map<String, Class<?>> probes = new java.util.LinkedHashMap<>();
    probes.put("grpc", Metadata.class);
    probes.put("netty", ByteBuf.class);
    probes.put("protobuf", Value.class);
    probes.put("guava", ImmutableList.class);
    probes.put("micrometer", SimpleMeterRegistry.class);
    probes.put("opentelemetry", GlobalOpenTelemetry.class);
    probes.put("jackson", ObjectMapper.class);
    probes.put("slf4j", LoggerFactory.class);
    probes.put("bytebuddy", ByteBuddy.class);
    for (Map.Entry<String, Class<?>> e : probes.entrySet()) {
      String jar = e.getValue().getProtectionDomain().getCodeSource().getLocation().getPath();
      System.out.println("LIB " + e.getKey() + " " + jar.substring(jar.lastIndexOf('/') + 1));
    }

    // Use them, so a clash would show as a linkage error rather than pass unnoticed.
    Metadata md = new Metadata();
    md.put(Metadata.Key.of("k", Metadata.ASCII_STRING_MARSHALLER), "v");
    ByteBuf buf = Unpooled.copiedBuffer(new byte[] {1, 2, 3});
    Value v = Value.newBuilder().setStringValue("x").build();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    registry.counter("app.counter").increment();
    String json = new ObjectMapper().writeValueAsString(ImmutableList.of(1, 2, 3));
    LoggerFactory.getLogger(IsolationApp.class);
    GlobalOpenTelemetry.getMeter("app");
    Class<?> made = new ByteBuddy().subclass(Object.class).make().load(IsolationApp.class.getClassLoader()).getLoaded();
    System.out.println("USED " + md.keys() + " " + buf.readableBytes() + " " + v.getStringValue() + " "
        + registry.get("app.counter").counter().count() + " " + json + " " + (made != null));

    for (String hidden : new String[] {"dev.fencing.agent.shaded.io.grpc.Metadata", "dev.fencing.agent.config.AgentConfig",
        "dev.fencing.agent.shaded.com.google.common.collect.ImmutableList"}) {
      try {
        Class.forName(hidden);
        System.out.println("VISIBLE " + hidden);
      } catch (ClassNotFoundException expected) {
        System.out.println("HIDDEN " + hidden);
      }
    }
    System.out.println("ISOLATION DONE");
    if (args.length > 0) {
      Thread.sleep(Long.parseLong(args[0]));
    }
  }
}
