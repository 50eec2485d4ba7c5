"""Given names, written for this project from general knowledge, grouped by language area.

A capitalised word found here is strong evidence of a person's name. Names that are also
ordinary English words (Will, May, Hope) are listed separately in name_words.AMBIGUOUS and
need a second cue.
"""

from __future__ import annotations

import unicodedata

from gateway.classify.detectors.given_names_europe import EUROPE_GIVEN_NAMES
from gateway.classify.detectors.given_names_more import MORE_GIVEN_NAMES
from gateway.classify.detectors.given_names_world import WORLD_GIVEN_NAMES

_ENGLISH = """
Aaron Abigail Adam Adrian Aidan Alan Albert Alex Alexander Alexandra Alexis Alfred Alice Alicia
Alison Allison Alyssa Amanda Amber Amelia Amy Andrea Andrew Angela Anna Anne Annie Anthony Arthur
Ashley Audrey Austin Ava Barbara Barry Beatrice Becky Benjamin Bernard Beth Bethany Betty Beverly
Billy Blake Bobby Bonnie Bradley Brandon Brenda Brendan Brian Bridget Brittany Brooke Bruce Bryan
Caitlin Caleb Cameron Carl Carla Carol Caroline Carolyn Carrie Catherine Cathy Charles Charlie
Charlotte Chelsea Cheryl Chloe Chris Christian Christina Christine Christopher Cindy Claire Clara
Clarence Claudia Clifford Clinton Cody Colin Connor Craig Crystal Cynthia Dale Daniel Danielle
Danny Darren David Dean Deborah Debra Denise Dennis Derek Diana Diane Donald Donna Doris Dorothy
Douglas Dylan Edith Edward Edwin Eileen Elaine Eleanor Elijah Elizabeth Ella Ellen Emily Emma
Eric Erica Erin Ethan Eugene Evelyn Felicity Fiona Florence Frances Francis Fred Frederick
Gabriel Gabriella Gary Gavin Gemma Geoffrey George Georgia Gerald Gertrude Gillian Gloria Gordon
Graham Gregory Hailey Hannah Harold Harriet Harrison Harry Hayley Heather Helen Henry Hilary Holly
Howard Hugh Ian Isaac Isabel Isabella Isabelle Jack Jackson Jacob Jacqueline Jake James Jamie
Jane Janet Janice Jared Jason Jasmine Jean Jeffrey Jennifer Jenny Jeremy Jerry Jesse Jessica
Jill Joan Joanna Joanne Jodie Joe Joel John Johnny Jonathan Jordan Joseph Joshua Joyce Judith
Judy Julia Julian Julie Justin Karen Kate Katherine Kathleen Kathryn Katie Kayla Keith Kelly
Kelsey Kenneth Kevin Kimberly Kirsty Kyle Lara Larry Laura Lauren Lawrence Leah Leonard Leslie
Liam Lillian Lily Linda Lindsay Lisa Logan Lois Lorraine Louis Louise Lucas Lucy Luke Lydia
Lynn Madison Margaret Maria Marie Marilyn Marion Martha Martin Mary Matthew Megan Melanie
Melissa Michael Michelle Mildred Mitchell Molly Monica Nancy Natalie Nathan Nathaniel Neil
Nicholas Nicola Nicole Noah Norman Olivia Oliver Oscar Owen Pamela Patricia Patrick Paul Paula
Peggy Penelope Peter Philip Phillip Phoebe Phyllis Rachel Ralph Randy Raymond Rebecca Regina
Richard Robert Roberta Robin Rodney Roger Ronald Rosemary Ross Roy Russell Ruth Ryan Samantha
Samuel Sandra Sara Sarah Scott Sean Sharon Shawn Sheila Shirley Sophia Sophie Stacy Stanley
Stephanie Stephen Steven Stuart Susan Suzanne Sydney Tamara Teresa Terry Thomas Timothy Tina
Todd Tracy Travis Trevor Tyler Valerie Vanessa Victor Victoria Vincent Virginia Walter Wayne
Wendy William Willie Zachary Zoe Abby Alistair Angus Archibald Ashton Barnaby Bertie Brett Callum
Cecil Clive Declan Desmond Dominic Duncan Eamon Elliot Ewan Fergus Finlay Gareth Glenn Hamish
Imogen Isla Jocelyn Keira Kirk Lachlan Lorna Malcolm Morag Neville Nigel Niamh Orla Percy Quentin
Rhys Rory Rupert Seamus Shane Siobhan Tristan Wyatt Zara Devin Kendra Kristen Kristin
Kristina Marcus Marissa Maxwell Meredith Miranda Naomi Nora Paige Preston Priscilla Rosalind
Sabrina Savannah Selena Sherry Spencer Tanya Tara Theodore Vivian Wesley Whitney Yvonne Shelby
"""

_ROMANCE = """
Adriana Adriano Agustín Alberto Alejandra Alejandro Alessandra Alessandro Alfonso Alfredo Álvaro
Ana Andrés Ángel Ángela Antonella Antonia Antonio Aurora Beatriz Benedetta Bernardo Blanca
Bruno Camila Camille Carla Carlos Carlota Carmen Carolina Catalina Cecilia Celia Chiara Claudio
Concepción Cristina Cristian Daniela Dario Diego Dolores Domenico Eduardo Elena Elisa Emilio
Enrique Enzo Esteban Eva Fabio Federico Felipe Fernanda Fernando Filippo Francesca Francesco
Francisco Franco Gabriela Giacomo Gianluca Gianni Giorgio Giovanna Giovanni Giulia Giulio
Giuseppe Gonzalo Graciela Guadalupe Guillermo Gustavo Héctor Ignacio Inés Isabella Javier Jesús
Joaquín Jorge José Josefina Juan Juana Julieta Leandro Leonardo Leticia Lorena Lorenzo Luca
Lucía Luciana Luciano Luis Luisa Manuel Manuela Marcela Marco Marcos Margarita Mariana Mario
Marta Martina Mateo Matías Mauricio Mercedes Miguel Milagros Mónica Natalia Nicolás Nicola
Núria Óscar Pablo Paola Patricio Pedro Pietro Pilar Rafael Raquel Raúl Ricardo Roberto Rocío
Rodrigo Rosa Rosario Salvador Santiago Sebastián Sergio Silvia Simona Sofía Soledad Stefano
Susana Teresa Tomás Valentina Valeria Vicente Vittoria Ximena Yolanda Alessia Arianna Beltrán
Benito Ciro Dante Donatella Elio Ettore Fausto Gaetano Gianna Ilaria Lidia Loredana Massimo
Matteo Maurizio Mirella Nunzia Orazio Ottavio Pasquale Piero Raffaele Riccardo Rocco Sabrina
Salvatore Sandro Serena Silvio Tiziana Tommaso Umberto Vincenzo Vito Leonor Afonso Anselmo
Caetano Conceição Duarte Fabiana Gonçalo Henrique Joana João Leonel Letícia Lívia Luana Marcelo
Mariana Matheus Murilo Otávio Paulo Renata Rui Sílvia Thiago Vinícius Vitória Adèle Agathe Aimée
Alain Amélie Anaïs André Antoine Arnaud Aurélie Baptiste Benoît Bernadette Brigitte Céline Chantal
Christophe Claude Clément Colette Corinne Damien Delphine Didier Dominique Élise Éloïse Émile
Étienne Fabien Fabrice Florian Françoise François Frédéric Gaëlle Gérard Gilles Guillaume Hélène
Henri Hugo Inès Isabelle Jacques Jeanne Jérôme Joël Julien Laetitia Laurent Léa Léon Léonie Lucie
Madeleine Manon Marcel Margaux Marguerite Mathieu Mathilde Maxime Michel Michèle Mireille Nathalie
Noémie Océane Olivier Pascal Pascale Patrice Philippe Pierre Quentin Raphaël Rémi Renée Sandrine
Sébastien Serge Simone Solène Stéphane Sylvie Thierry Valérie Véronique Xavier Yann Yves Zoé
Ines Alba Anselme Gaspard Lucien Ludovic Mathias Régis Romain Thibault Victoire Vivienne
Adelina Anca Bogdan Corina Cosmin Dorin Florin Ionela Iulia Loredana Mihaela Mircea Ovidiu Radu
Sorin Traian Vlad Camelia Cătălin Gheorghe Ioana Ionuț
"""

_GERMANIC = """
Achim Adelheid Agnes Albrecht Andreas Anja Anke Annika Armin Astrid Axel Barbara Bärbel Bastian
Bernd Birgit Björn Brigitte Carsten Christa Christiane Christoph Claudia Conrad Dagmar Detlef
Dieter Dirk Dominik Doris Egon Elke Elfriede Elias Emil Erich Erika Ernst Erwin Eva Fabian Felix
Florian Franz Franziska Friedrich Frieda Gabriele Georg Gerda Gerhard Gisela Gottfried Gudrun
Günter Günther Hanna Hannelore Hans Harald Hartmut Heidi Heike Heinrich Heinz Helga Helmut
Herbert Hermann Hildegard Holger Horst Ilse Ingeborg Ingo Ingrid Irmgard Jan Jana Jens Joachim
Johanna Johannes Jonas Jörg Jürgen Jutta Karin Karl Karsten Katharina Katrin Kerstin Klaus
Konrad Kurt Lars Lena Leni Lukas Lothar Ludwig Lutz Magdalena Maik Manfred Mareike Margarete
Marianne Markus Marlene Martha Matthias Maximilian Monika Nadine Niklas Nina Norbert Olaf Otto
Petra Rainer Ralf Regina Reinhard Renate Rolf Rudolf Ruth Sabine Sandra Sebastian Siegfried
Sigrid Silke Simon Sonja Stefan Stefanie Susanne Sven Swen Tanja Thorsten Tobias Torsten Udo
Ulla Ulrich Ulrike Ursula Ute Uwe Volker Walter Waltraud Werner Wilhelm Wolfgang Yvonne Luca
Bram Daan Dirk Femke Fenna Floor Geert Gijs Hendrik Henk Ilse Jaap Janneke Jelle Joost Joris
Kees Koen Lieke Lotte Maarten Maaike Marieke Marjolein Mieke Niels Pieter Roel Ruud Sanne Sem
Sjoerd Stijn Thijs Tim Twan Wim Willem Wouter Anouk Bas Eline Esther Fleur Gerrit Hanneke
Ingeborg Jeroen Jorien Kim Lisanne Mirjam Nienke Noor Rutger Ties Tijn Vera Yara Ruben
"""

_NORDIC = """
Aake Agnetha Alfhild Anders Anette Anita Ann-Charlotte Anneli Arne Arvid Åsa Asbjørn Aslaug
Åke Bengt Birger Birgitta Bjarne Bjørn Bo Bodil Børge Britt Britta Carina Dag Dagny Ebba Einar
Eirik Elin Elisabeth Ellinor Emil Erik Erika Erling Espen Eva Finn Frida Frode Gösta Gunnar
Gunhild Gunnhild Gustav Göran Hakon Håkan Halvard Halvor Hanne Hans Harald Hedda Helga Henrik
Hilde Hjalmar Idun Inga Inge Inger Ingrid Ingvar Jakob Jens Jesper Johan Jonas Jørgen Josefin
Kaj Karen Kari Karl Kasper Kirsten Kjell Klara Knut Kristian Kristina Lars Lasse Leif Lena
Linnea Lise Lisbeth Magnus Malin Marit Mats Mette Mikael Mikkel Morten Nils Ola Olav Ole
Oskar Ove Per Pernille Preben Ragnar Ragnhild Rasmus Rune Sigrid Sigurd Silje Siri Solveig Sten
Stig Sune Svein Sverre Terje Thor Tor Torbjørn Tore Torvald Trine Trond Tuva Ulf Ulrika Vibeke
Vidar Viggo Vilhelm Agnete Anker Bente Birte Dorte Gitte Helle Jette Lone Lotte Merete Ulla
Aino Aleksi Anneli Antti Arto Eero Eija Eino Elina Esa Hannu Heikki Helmi Ilkka
Ilmari Jaakko Jani Jarmo Jari Jouni Juha Juhani Jukka Jussi Kaarina Kaija Kalevi Kari Katja
Keijo Kimmo Kirsi Lauri Leena Liisa Markku Marjatta Marko Matti Merja Mika Minna Mirja Niina
Olli Paavo Päivi Pasi Pekka Pentti Petri Pirjo Raili Riikka Risto Ritva Sanna Sari Seppo Sirpa
Tapani Tapio Teemu Terttu Timo Tuomas Tuula Tuomo Ulla Veikko Ville Väinö Aatu Eetu Onni Otso
Aðalsteinn Agnar Ari Ásdís Ásgeir Baldur Birgir Bjarki Brynjar Dagur Einar Eiríkur Elín
Guðmundur Guðrún Gunnar Hafdís Halldór Hallgrímur Haukur Helgi Hildur Hrafn Ingibjörg Jóhann
Jóhanna Jón Kári Katrín Kristín Magnús Ólafur Páll Ragnheiður Sigríður Sigurður
Snorri Stefán Steinunn Sveinn Þór Þóra Þórunn Unnur Vilhjálmur Þorsteinn
"""

_SLAVIC_BALTIC = """
Adam Agnieszka Aleksander Aleksandra Alicja Andrzej Aneta Anna Antoni Barbara Bartosz Beata
Bogdan Bogusław Bożena Bozena Czesław Danuta Dariusz Dominika Dorota Edyta Elżbieta Ewa Ewelina
Grażyna Grzegorz Halina Hanna Henryk Irena Iwona Jacek Jadwiga Jakub Jan Janina Janusz Jarosław
Jerzy Joanna Józef Julia Justyna Kamil Kamila Karol Karolina Katarzyna Kazimierz Klaudia
Krystyna Krzysztof Leszek Łukasz Maciej Magdalena Małgorzata Marcin Marek Maria Mariusz Marta
Mateusz Michał Mirosław Monika Natalia Oliwia Patryk Paweł Piotr Przemysław Radosław Rafał
Renata Roman Ryszard Sebastian Stanisław Stefan Sylwia Szymon Tadeusz Teresa Tomasz Urszula
Wanda Weronika Wiesław Wiktor Wiktoria Witold Władysław Wojciech Zbigniew Zdzisław Zofia Zuzanna
Aleš Alena Alžběta Barbora Blanka Bohumil Bohuslav Dalibor Daniela Eliška Eva Františka František
Hana Ivana Jana Jarmila Jaroslav Jiří Jitka Josef Kateřina Klára Ladislav Lenka Libuše Lucie
Ludmila Lukáš Marcela Markéta Martin Michaela Milan Miloslav Miroslav Monika Ondřej Pavel
Pavlína Petr Radek Radka Renata Roman Růžena Šárka Simona Stanislav Tereza Tomáš Václav Věra
Veronika Vlasta Vojtěch Zdeněk Zdeňka Zuzana Matej Matúš Juraj Ľubomír Ľudmila Jozef Mária Michal
Andrej Anka Boris Branko Dragan Dragana Dušan Goran Gordana Ivan Ivana Ivo Jelena Josip Jovan
Katarina Luka Maja Marija Marko Mateja Milena Miloš Mirjana Nada Nataša Nenad Nikola
Petra Predrag Ranko Sanja Slavko Snežana Srđan Stjepan Tanja Tijana Vesna Zoran Željko Živko
Aleksandr Aleksei Alexei Alla Anastasia Anatoly Andrei Anton Arkady Boris Daria Darya Denis
Dmitri Dmitry Ekaterina Elena Evgeny Fedor Galina Gennady Georgy Grigory Igor Ilya Inna Irina
Ivan Katya Kirill Konstantin Ksenia Larisa Leonid Lyudmila Maksim Margarita Marina Maxim Mikhail
Nadezhda Natalya Nikita Nikolai Oksana Oleg Olga Pavel Polina Roman Ruslan Sergei Sergey Stanislav
Svetlana Tatiana Tatyana Timur Vadim Valentina Valery Vasily Vera Viktor Vitaly Vladimir
Vladislav Yaroslav Yulia Yuri Zinaida Zoya Aslan Ramzan Said Magomed
Mindaugas Tomas Gintaras Rūta Jūratė Andris Jānis Ilze Kristaps Līga Māris Raimonds Toomas Tiit
Mart Kadri Liis Triin Andrus Ülle Jaan Rein Kalle Kristjan
"""

_HUNGARIAN_GREEK_TURKIC = """
Ádám Adrienn Ágnes Ákos Andor András Andrea Anikó Attila Balázs Barnabás Béla Bence Boglárka
Csaba Csilla Dániel Dávid Dénes Dóra Edit Emese Endre Erika Erzsébet Eszter Ferenc Flóra Gábor
Gergely Géza Gyula Gyöngyi Hajnalka Henrietta Ildikó Imre István Judit Julianna Kálmán Károly
Katalin Klára Kinga Kornél Krisztián Krisztina Lajos László Levente Lilla Márk Márta Márton
Mihály Miklós Nándor Nikolett Noémi Orsolya Ottó Pál Péter Piroska Réka Rita Róbert Rozália
Sándor Szilvia Tamás Teréz Tibor Tímea Tünde Valéria Vilmos Viktória Zita Zoltán Zsófia
Zsolt Zsuzsanna Ádor Botond Bulcsú Előd Huba Kende Tas Vince
Alexandros Anastasios Andreas Angeliki Antonios Apostolos Athanasios Christos Dimitra Dimitrios
Eleni Eleftherios Evangelia Evangelos Georgia Georgios Ioanna Ioannis Katerina Konstantinos
Kostas Maria Michail Nikolaos Nikos Panagiotis Paraskevi Sofia Spyridon Stavros Theodora
Theodoros Vasiliki Vasilis Yannis Yiannis Despina Chrysa Eirini Fotini Kyriaki Stella Thanasis
Ahmet Ali Aylin Ayşe Burak Can Cem Deniz Ebru Elif Emine Emre Esra Fatma Hakan Hasan Hatice
Hüseyin Kemal Leyla Mehmet Meltem Murat Mustafa Ömer Orhan Özlem Selin Serkan Tuba Yusuf Zeynep
"""

_ASIAN_AFRICAN_MIDDLE_EAST = """
Aiko Akiko Akira Asuka Ayako Chiyo Daichi Daisuke Emi Haruka Haruto Hideki Hina Hiroko Hiroshi
Hiroto Ichiro Kaito Kaori Kazuki Kazuo Keiko Kenji Kenta Koji Kumiko Makoto Mami Mariko Masahiro
Masaki Mayumi Megumi Minoru Misaki Naoki Naoko Noriko Osamu Ren Riko Ryo Ryota Sakura Satoshi
Shinji Shota Sora Takashi Takeshi Takumi Taro Tomoko Toshiro Tsubasa Yui Yuka Yuki
Yumiko Yuto Yutaka Chen Hui Jia Jian Jing Jun Lei Li Lian Lin Ling Mei Min Ming Ping Qiang
Qing Wei Xia Xiu Yan Yang Ying Yong Yu Zhen Zhi Ji-woo Ji-hoon Min-jun Seo-yeon Soo-jin Hyun
Jae-hyun Eun-ji Hye-jin Sung-min Aarav Aditi Aditya Akash Amit Ananya Anil Anjali Arjun Arun
Deepak Divya Gaurav Harish Ishaan Kavya Kiran Krishna Lakshmi Manish Meera Mohan Neha Nikhil
Nisha Pooja Pradeep Priya Rahul Rajesh Ramesh Ravi Rohan Sanjay Sandeep Sanjana Shreya Sneha
Sunil Suresh Tanvi Varun Vikram Vijay Vivek Abdullah Ahmad Ahmed Aisha Amina Amir Farah Fatima
Hamza Hassan Hussein Ibrahim Imran Jamal Karim Khalid Layla Mahmoud Mariam Mohamed Mohammad
Mohammed Mustafa Nadia Omar Rania Rashid Salma Samir Sami Tariq Yasmin Youssef Zainab Zaid
Adaeze Abebe Amara Ayodele Babajide Chidi Chinedu Chioma Emeka Femi Kwame Kofi Kwabena Ngozi
Nnamdi Obinna Olumide Oluwaseun Sipho Thabo Themba Zanele Tsegaye Abeba Dawit Mekdes
Yohannes Mandla Nomvula Precious Tendai Tafadzwa Naveen
"""

GIVEN_NAMES: frozenset[str] = frozenset(
    " ".join(
        (_ENGLISH, _ROMANCE, _GERMANIC, _NORDIC, _SLAVIC_BALTIC, _HUNGARIAN_GREEK_TURKIC,
         _ASIAN_AFRICAN_MIDDLE_EAST)
    ).split()
) | MORE_GIVEN_NAMES | WORLD_GIVEN_NAMES | EUROPE_GIVEN_NAMES


def _folded(name: str) -> str:
    """The name without its accents ("Élodie" → "Elodie"); letters that do not decompose
    ("Ł") leave it as it is."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return folded if len(folded) == len(name) else name


# Unaccented, these are words or terms before they are names ("Kalman filter", "La Liga",
# "a weighty tome").
_WORDS_UNACCENTED = frozenset("Kalman Tome Pall Liga Palma Flora Ales".split())

# A name the lists spell with accents is found without them too ("Elodie"), as people type
# it; never the other way round: accents tell words apart ("Mình", I, is not "Minh"). Short
# forms ("Ake", "Pal") are left out, as the batches leave out short names.
GIVEN_NAMES_UNACCENTED: frozenset[str] = GIVEN_NAMES | {
    folded for folded in map(_folded, (n for n in GIVEN_NAMES if not n.isascii()))
    if len(folded) > 3 and folded not in _WORDS_UNACCENTED
}
