"""A fourth batch of given names, written for this project from general knowledge: the common
given names of France, Germany, Spain, Italy, Portugal and Brazil, Poland, Turkey and the
Netherlands across the generations now at work, spelt as natives write them (a lookup also
tries a name without its accents, so "Élodie" and "Elodie" are one entry). Same rule as the
other batches: no name that is also an everyday English word; names that are everyday words
in their own language ("Deniz", sea; "Paz", peace) are left out or sit in
name_words.AMBIGUOUS."""

from __future__ import annotations

_FRENCH = """
Nicolas Julien Mathieu Matthieu Guillaume Sébastien Jérôme Stéphane Frédéric Thierry Benoît
Cédric Fabrice Laurent Olivier Arnaud Romain Maxime Antoine Quentin Mathis Théo Lucas
Clément Baptiste Florian Aurélien Jérémy Yannick Loïc Gaël Hervé Didier Régis Gérard
Bernard Alain Thibault Corentin Valentin Élodie Aurélie Émilie Céline Sandrine Nathalie
Stéphanie Séverine Virginie Delphine Isabelle Sylvie Véronique Valérie Christelle Laetitia
Mélanie Manon Camille Chloé Inès Océane Anaïs Margaux Pauline Justine Clémence Solène
Gaëlle Maëlle Agathe Capucine Brigitte Françoise Geneviève Hélène Élise Amélie Noémie Coralie
Ludivine Jocelyne Ghislaine Mireille Josiane
"""

_GERMAN = """
Jürgen Jörg Dieter Klaus Günter Günther Horst Helmut Helmuth Wolfgang Manfred Rainer
Reinhard Heinz Karl Hans Lukas Jonas Leon Felix Maximilian Moritz Niklas Tobias Florian
Sebastian Matthias Stefan Steffen Torsten Thorsten Sven Dirk Holger Ralf Björn Timo
Lars Marc Andreas Markus Sabine Heike Silke Anke Birgit Petra Monika Ursula Renate
Gisela Ingrid Brigitte Gabriele Claudia Susanne Kerstin Katrin Anja Nadine Jana Lena
Hannah Hanna Emma Sophie Johanna Marie Annika Lisa Laura Jasmin Mareike Wiebke Frauke
Antje Dörte Jutta Elke Hildegard Gertrud Waltraud Rosemarie Liselotte
"""

_SPANISH_PORTUGUESE = """
Javier Sergio Alejandro Pablo Álvaro Jorge Raúl Rubén Iván Óscar Adrián Diego Gonzalo Íñigo
Iñaki Unai Aitor Asier Mikel Jaime Ignacio Rodrigo Fernando Francisco Paco Manuel
Joaquín Agustín Andrés Martín Tomás Ramón Jesús José Josep Jordi Xavier Enric Marc Lucía
María Carmen Pilar Mercè Nuria Núria Laia Ainhoa Itziar Nerea Leire Irene Elena Sara
Cristina Raquel Marta Beatriz Inés Rocío Macarena Almudena Begoña Aránzazu Ángela Sofía Paula
 Noelia Lorena Verónica Silvia Yolanda Inmaculada Ximena Valentina
João Gonçalo Nuno Tiago Thiago Vítor Vinícius Leonardo Gustavo Rafael Bruno Caio Otávio
Luís Luiz Sérgio Márcio Marcelo Rogério Fábio Flávio Júlio Cláudio Antônio António Conceição
Fernanda Gabriela Juliana Luana Larissa Letícia Patrícia Márcia Cláudia Flávia Vanessa Tânia
Simone Adriana Renata Aline Camila Bianca Débora Priscila Raíssa Thaís Beatriz Mariana Inês
Leonor Matilde Catarina Joana Margarida Filipa Francisca Rita Sónia Sônia
"""

_ITALIAN = """
Alessandro Andrea Luca Matteo Lorenzo Davide Simone Federico Riccardo Stefano Giuseppe
Giovanni Francesco Antonio Salvatore Vincenzo Massimo Maurizio Fabrizio Roberto Gianluca
Gianluigi Gianni Giorgio Paolo Pietro Tommaso Filippo Edoardo Emanuele Daniele Michele
Nicola Raffaele Gennaro Pasquale Alessia Chiara Francesca Giulia Martina Federica
Valentina Silvia Elisa Sara Ilaria Elena Roberta Paola Giovanna Giuseppina Antonella Daniela
Simona Manuela Raffaella Lucia Beatrice Alice Greta Noemi Arianna Serena Cinzia
Loredana Patrizia Rossella Gabriella Donatella Ornella Mariangela Annalisa
"""

_POLISH = """
Piotr Krzysztof Tomasz Paweł Michał Marcin Łukasz Grzegorz Mateusz Jakub Kamil Wojciech
Rafał Dariusz Mariusz Sławomir Zbigniew Jerzy Andrzej Stanisław Tadeusz Kazimierz Janusz
Bartosz Bartłomiej Szymon Maciej Przemysław Radosław Jacek Wiesław Agnieszka Małgorzata
Katarzyna Joanna Magdalena Monika Beata Dorota Barbara Krystyna Elżbieta Grażyna Jadwiga
Halina Danuta Bożena Urszula Renata Iwona Justyna Aleksandra Natalia Karolina Weronika Zuzanna
Zofia Kasia Gosia Basia Ania Magda Agata Marta Paulina Sylwia Izabela Żaneta
"""

_TURKISH = """
Ahmet Mehmet Mustafa Hüseyin Hasan İbrahim Ismail İsmail Osman Yusuf Murat Emre Burak Onur
Serkan Volkan Tolga Oğuz Oğuzhan Kerem Mert Berk Eren Arda Hakan Kemal Selim
Levent Erkan Gökhan Özgür Ayşe Fatma Emine Hatice Zeynep Elif Merve Büşra Esra Gizem
Selin Derya Özlem Sibel Gülşen Sevgi Tuğba Hülya Şule Yasemin Nazlı Ebru Pınar Aylin
Dilek Seda Cansu Burcu
"""

_DUTCH = """
Daan Bram Thijs Sander Joost Bart Ruud Wouter Maarten Niels Jeroen Stijn Koen Joris Sjoerd
Gert Geert Pieter Willem Hendrik Henk Kees Cees Johan Jochem Lieke Lotte Sanne Femke Anouk
Marloes Mirjam Ingrid Annemieke Marieke Esther Ilse Inge Loes Maaike Saskia Wendy Yvonne
Ineke Janneke Nienke Fenna Sophie Tessa
"""

EUROPE_GIVEN_NAMES: frozenset[str] = frozenset(
    (_FRENCH + _GERMAN + _SPANISH_PORTUGUESE + _ITALIAN + _POLISH + _TURKISH + _DUTCH).split()
)
