package dev.fencing.agent.instrumentation;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.pool.TypePool;
import org.junit.jupiter.api.Test;

/**
 * The header filter never rules out a class ByteBuddy's {@code not(isInterface()).and(hasSuperType(named(...)))}
 * accepts, on real jars, and rules out the classes that only name a wanted type.
 */
class SuperTypeFilterTest {
  private static final Set<String> STATEMENT = Set.of("java/sql/Statement");
  private final ClassLoader loader = SuperTypeFilterTest.class.getClassLoader();

  interface OwnStatement extends java.sql.PreparedStatement {}

  abstract static class StatementBase implements OwnStatement {}

  abstract static class DeepStatement extends StatementBase implements Runnable {}

  /** Names java/sql/Statement in its constant pool (a field type) without being one: Hibernate's common case. */
  static class NamesStatement implements java.io.Serializable {
    java.sql.Statement statement;
  }

  static class NamesStatementSubclass extends NamesStatement implements Comparable<String> {
    @Override
    public int compareTo(String o) {
      return 0;
    }
  }

  @Test
  void readsTheHeaderOfARealClassFile() throws IOException {
    SuperTypeFilter.Header h = SuperTypeFilter.parse(classFile(java.util.ArrayList.class));
    assertThat(h.isInterface).isFalse();
    assertThat(h.superName).isEqualTo("java/util/AbstractList");
    assertThat(h.interfaces).containsExactly("java/util/List", "java/util/RandomAccess", "java/lang/Cloneable",
        "java/io/Serializable");
    assertThat(SuperTypeFilter.parse(classFile(java.sql.PreparedStatement.class)).isInterface).isTrue();
    assertThat(SuperTypeFilter.parse(classFile(Object.class)).superName).isNull();
    assertThat(SuperTypeFilter.parse(new byte[] {1, 2, 3})).as("not a class file").isNull();
  }

  @Test
  void keepsClassesThatHaveTheTypeThroughClassesAndInterfaces() throws IOException {
    SuperTypeFilter f = new SuperTypeFilter();
    assertThat(f.mayHaveSuperType(loader, classFile(DeepStatement.class), STATEMENT)).isTrue();
    assertThat(f.mayHaveSuperType(loader, classFile(StatementBase.class), STATEMENT)).isTrue();
    assertThat(f.mayHaveSuperType(loader, classFile(DeepStatement.class), Set.of("java/lang/Runnable"))).isTrue();
  }

  @Test
  void rulesOutInterfacesAndClassesThatOnlyNameTheType() throws IOException {
    SuperTypeFilter f = new SuperTypeFilter();
    assertThat(f.mayHaveSuperType(loader, classFile(OwnStatement.class), STATEMENT)).as("an interface").isFalse();
    assertThat(f.mayHaveSuperType(loader, classFile(NamesStatement.class), STATEMENT)).isFalse();
    assertThat(f.mayHaveSuperType(loader, classFile(NamesStatementSubclass.class), STATEMENT)).isFalse();
  }

  @Test
  void keepsAClassWhoseSuperTypeCannotBeRead() throws IOException {
    // A loader that finds none of the test's classes: NamesStatementSubclass's super class cannot be read.
    ClassLoader blind = new ClassLoader(null) {};
    SuperTypeFilter f = new SuperTypeFilter();
    assertThat(f.mayHaveSuperType(blind, classFile(NamesStatementSubclass.class), STATEMENT)).isTrue();
    assertThat(f.mayHaveSuperType(blind, classFile(NamesStatement.class), STATEMENT))
        .as("its super types (Object, Serializable) are the JDK's").isFalse();
    assertThat(f.mayHaveSuperType(blind, (SuperTypeFilter.Header) null, STATEMENT)).as("no header").isTrue();
  }

  @Test
  void neverRulesOutWhatByteBuddyMatchesOnRealJars() throws IOException, URISyntaxException {
    List<String> wanted = List.of("java.sql.Statement", "java.sql.Connection", "java.lang.ClassLoader",
        "java.io.Closeable", "java.lang.Runnable", "java.util.concurrent.Executor");
    TypePool pool = TypePool.Default.of(ClassFileLocator.ForClassLoader.of(loader));
    SuperTypeFilter f = new SuperTypeFilter();
    int classes = 0;
    int[] matched = new int[wanted.size()];
    int[] ruledOut = new int[wanted.size()];
    for (Class<?> inJar : List.of(org.apache.kafka.clients.producer.KafkaProducer.class,
        org.apache.zookeeper.ZooKeeper.class, io.netty.channel.Channel.class, net.bytebuddy.ByteBuddy.class)) {
      for (String name : classNames(inJar)) {
        byte[] bytes = classFile(name);
        TypeDescription type = pool.describe(name.replace('/', '.')).resolve();
        classes++;
        for (int i = 0; i < wanted.size(); i++) {
          boolean byteBuddy;
          try {
            byteBuddy = not(isInterface()).and(hasSuperType(named(wanted.get(i)))).matches(type);
          } catch (RuntimeException unresolvable) {
            continue; // a super type missing from the class path (an optional dependency of the jar)
          }
          boolean kept = f.mayHaveSuperType(loader, bytes, Set.of(wanted.get(i).replace('.', '/')));
          if (byteBuddy) {
            matched[i]++;
            assertThat(kept).as(name + " has " + wanted.get(i)).isTrue();
          }
          if (!kept) {
            ruledOut[i]++;
          }
        }
      }
    }
    assertThat(classes).as("classes checked").isGreaterThan(5_000);
    for (int i = 0; i < wanted.size(); i++) {
      if (!wanted.get(i).startsWith("java.sql.")) {
        assertThat(matched[i]).as(wanted.get(i) + " implemented in these jars").isPositive();
      }
      assertThat(ruledOut[i]).as(wanted.get(i) + ": most classes are ruled out").isGreaterThan(classes / 2);
    }
  }

  private static List<String> classNames(Class<?> inJar) throws IOException, URISyntaxException {
    Path jar = Path.of(inJar.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<String> names = new ArrayList<>();
    try (JarFile j = new JarFile(jar.toFile())) {
      for (Enumeration<JarEntry> e = j.entries(); e.hasMoreElements(); ) {
        String n = e.nextElement().getName();
        if (n.endsWith(".class") && !n.startsWith("META-INF/") && !n.endsWith("module-info.class")
            && !n.endsWith("package-info.class")) {
          names.add(n.substring(0, n.length() - ".class".length()));
        }
      }
    }
    assertThat(names).as(jar.toString()).isNotEmpty();
    return names;
  }

  private static byte[] classFile(Class<?> c) throws IOException {
    return classFile(c.getName().replace('.', '/'));
  }

  private static byte[] classFile(String internalName) throws IOException {
    ClassLoader l = SuperTypeFilterTest.class.getClassLoader();
    try (InputStream in = l.getResourceAsStream(internalName + ".class")) {
      assertThat(in).as(internalName).isNotNull();
      return in.readAllBytes();
    }
  }
}
