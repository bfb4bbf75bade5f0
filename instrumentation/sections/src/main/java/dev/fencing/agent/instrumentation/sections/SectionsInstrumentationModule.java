package dev.fencing.agent.instrumentation.sections;

import dev.fencing.agent.instrumentation.api.SectionSpec;
import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.InstrumentationModule;
import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Declared sections ({@code fencing.sections}): one type instrumentation per declared class, putting the section
 * advice on the declared methods. Nothing at all without sections. Switch: fencing.instrumentation.sections.enabled.
 */
public final class SectionsInstrumentationModule implements InstrumentationModule {
  private volatile List<SectionSpec> sections = List.of();

  @Override
  public String name() {
    return "sections";
  }

  @Override
  public void install(AgentContext context) {
    sections = context.config().sections();
  }

  @Override
  public List<TypeInstrumentation> typeInstrumentations() {
    return instrumentations(sections);
  }

  /** The declared methods grouped by class, in declaration order. */
  static List<TypeInstrumentation> instrumentations(List<SectionSpec> sections) {
    Map<String, List<String>> methodsByClass = new LinkedHashMap<>();
    for (SectionSpec s : sections) {
      // Plain loops, no lambdas: this runs in premain, where each lambda would spin a class.
      List<String> methods = methodsByClass.get(s.className());
      if (methods == null) {
        methods = new ArrayList<>();
        methodsByClass.put(s.className(), methods);
      }
      methods.add(s.method());
    }
    List<TypeInstrumentation> out = new ArrayList<>();
    for (Map.Entry<String, List<String>> e : methodsByClass.entrySet()) {
      out.add(new SectionInstrumentation(e.getKey(), e.getValue()));
    }
    return List.copyOf(out);
  }
}
