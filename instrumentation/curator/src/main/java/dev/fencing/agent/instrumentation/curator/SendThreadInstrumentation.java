package dev.fencing.agent.instrumentation.curator;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The application's ZooKeeper client ({@code ClientCnxn$SendThread.readResponse}, every reply but the connect
 * response): an answered ping proves the session alive at the ping's send time.
 */
final class SendThreadInstrumentation implements TypeInstrumentation {
  /**
   * Built at run time: the agent jar relocates its own ZooKeeper client, and the relocation rewrites every string
   * constant naming {@code org.apache.zookeeper}; this one must keep naming the application's class.
   */
  static final String CLASS = String.join(".", "org", "apache", "zookeeper", "ClientCnxn$SendThread");

  @Override
  public String classFileMarker() {
    return CLASS.replace('.', '/');
  }

  @Override
  public String className() {
    return CLASS;
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named(CLASS);
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("readResponse").and(takesArguments(1)), ReadResponseAdvice.class);
  }

  @Override
  public String toString() {
    return "ZooKeeper ClientCnxn$SendThread";
  }
}
