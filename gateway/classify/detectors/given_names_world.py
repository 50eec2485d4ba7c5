"""A third batch of given names, written for this project from general knowledge: spelling
variants and pet forms of common names, and names from language areas the first two batches
cover thinly (Nordic, Finnish, Dutch, Slavic, Balkan, Baltic, Hungarian, Iberian and Latin
American, Japanese). Same rule as the others: no name that is also an everyday English word
(those go to name_words.AMBIGUOUS); a unit test holds this."""

from __future__ import annotations

_VARIANTS = """
Abbie Abby Addie Aggie Aimee Alanna Alexia Alisha Allie Ally Alysha Alyson Andi Angie Annika
Annmarie Ashlee Ashleigh Ashlie Aubree Audra Bethanie Britney Brittani Brittney Bryana Callie
Cami Cammie Carlene Carly Carlie Carolyne Caryn Cassie Cathie Cathleen Chrissy Christi Christie
Christy Cindi Connie Corinne Cori Corrie Cristina Danni Darlene Debbie Debby Deena Deidre
Delores Dena Dianna Dodie Dottie Ellen Elly Erika Evie Fran Geri Gerri Gwyneth Jacki Janey
Jeannie Jenni Jennie Jessi Jessie Jodi Jodie Joni Josie Julianne Justine Kari Karla Kasey Kati
Katie Katy Kayleigh Kelli Kellie Kerri Kerrie Kristi Kristie Kristy Laurie Leigh Lexi Libby
Lindy Lisette Lizzie Lori Lorie Lorna Lottie Lynne Maddie Madeline Mandy Marcie Margie Marianne
Marlene Mattie Maddy Mellie Millie Mindy Mitzi Molly Nancie Nell Nellie Nicki Nikki Patti Peggy
Rebekah Ronnie Roxie Sadie Sallie Sammie Sandi Shari Sheri Sherri Sherrie Stacey Stacie Staci
Stevie Suzie Suzy Tami Tammi Tammie Teri Terri Terrie Tessa Tilly Vicki Vickie Vicky Alfie
Archie Barnaby Bertie Bertram Cecil Clint Donnie Eddy Freddy Jamey Jarrod Jerrod Jimmie Jody
Jonny Mikey Robbie Rodney Ronny Timmy Timmie Tommy Wally Thaddeus Anselm Barnabas Cornelius
Ignatius Lucius Marcus Octavius Phineas Tobias Zachariah Ebenezer Ezekiel Jedediah Josiah
Malachi Obadiah Zebedee Leverett Everard Reginald Rupert Tristram Wilfred Winifred Alma Selma
Thelma Velma Wilma Edna Mildred Agnes Beulah Bertha Celina Natasha Natascha Natasja Nastasia
Tasha Katrine Katrin Katarina Katharina Kathrin Catrin Catriona Caitriona Kirsten Kirstin
Kristen Kristin Kristine Christa
"""

_NORTHERN = """
Aase Agnete Agneta Anneli Annelie Anni Anniken Arild Arne Arvid Asbjørn Aslak Asta Astrid Audun
Bendik Bengt Birgit Birgitta Bjarne Bjørg Bjørn Bodil Borghild Brage Britt Britta Dagny Dagfinn
Eivind Eldbjørg Elin Ellinor Endre Espen Eyvind Frode Frida Geir Gerd Gisle Gudrun Gunhild
Gunnar Gunvor Guri Gyda Haakon Halfdan Halvard Halvor Hanne Hedda Hege Helga Helge Herdis Hilde
Hjalmar Inga Ingeborg Ingrid Ingvild Jarle Jofrid Jorunn Kaja Kari Karianne Katrine Kjell
Kjersti Knut Kristoffer Lage Leif Magne Maren Margit Marit Marius Morten Nils Oddvar Olav Ragna
Ragnar Ragnhild Randi Rasmus Reidun Rolf Runa Sigbjørn Sigmund Sigrid Sigurd Sindre Snorre
Solveig Sondre Steinar Stian Sturla Svein Sverre Synnøve Terje Tonje Torbjørn Tord Tore Torgeir
Torill Torstein Trond Trygve Turid Unni Vebjørn Vegard Vidar Vigdis Viggo Yngve Ylva Øystein
Åsmund Anders Axel Birger Ebba Egil Einar Elof Emil Erland Folke Fredrik Gösta Göran Gunilla
Gustav Hampus Harald Hedvig Holger Ingvar Jöran Kerstin Lasse Linnea Lovisa Mats Märta Ottilia
Pelle Rikard Sixten Stellan Stina Svante Ture Ulla Ulrika Vilgot Aksel Bjarke Carsten Dorte
Eskil Esben Flemming Frederikke Frederik Hans Henning Jens Jesper Jørgen Jytte Kasper Kirsten
Kjeld Lærke Mads Malene Mette Mikkel Niels Palle Poul Preben Rikke Signe Svend Søren Thorkild
Torben Trine Troels Ulrik Vibeke Aðalsteinn Ágúst Árni Ásdís Baldur Birna Bjarni Dagur Eiður
Elín Guðmundur Guðrún Gunnhildur Hafdís Halldór Hrafn Hulda Ingibjörg Jóhann Kolbrún Kristín
Magnús Ólafur Páll Ragnheiður Sigríður Sigurður Snorri Steinunn Sæunn Tómas Unnur Vigdís Þóra
Þórður Þorsteinn Aino Aleksi Antti Arto Eero Eeva Eija Eila Eino Elina Emmi Erkki Hannele Hanna
Heikki Heli Hilkka Ilkka Ilmari Impi Irja Jaakko Janne Jari Jarmo Jorma Jouni Juha Juhani Jukka
Jussi Jyrki Kaarina Kaija Kalle Kaisa Kalevi Keijo Kirsi Kyösti Lahja Lauri Leena Lempi Liisa
Maija Marjatta Marjo Markku Matti Mika Mikko Minna Mirja Mirjami Niilo Oili Olli Osmo Paavo
Pekka Pentti Petri Pirjo Pirkko Raija Raimo Raili Reijo Riikka Riitta Risto Ritva Sanna Sari
Seppo Sirkka Sirpa Taisto Tapani Tapio Tarja Teemu Tellervo Terhi Timo Toivo Tuija Tuomas Tuomo
Tuula Tyyne Unto Urho Vappu Veikko Vesa Vieno Ville Virpi Väinö Yrjö Aabid
"""

_DUTCH_GERMAN = """
Aafje Aaltje Aart Anouk Aantje Arjen Carlijn Cees Daan Doortje Eelco Femke Fenna Floris Frits
Gerrit Gert Gijs Gijsbert Gijsbrecht Gerben Geert Hendrik Hidde Hugo Ilse Ineke Jacoba Janneke
Jannes Jelle Jeroen Joost Joris Klaas Koen Lieke Lotte Lieve Luuk Maaike Marijke Marleen Marloes
Merel Mien Nienke Niek Pieter Remco Rutger Ruud Sander Sanne Siem Sjaak Sjoerd Stijn Teun Thijs
Tjeerd Truus Twan Wessel Willem Wout Wouter Ymke Adelheid Anke Annegret Anselm Arndt Benedikt
Berthold Brigitte Burkhard Detlef Dieter Dietrich Dörte Eberhard Ekkehard Elke Engelbert Ernst
Erwin Friedhelm Friedrich Gebhard Gerd Gerhard Gerlinde Gertrud Gisela Gottfried Gudrun Günter
Günther Hannelore Hartmut Heike Heiko Heinrich Heinz Helmut Hermann Hildegard Horst Ingo Irmgard
Jürgen Karl Karsten Klaus Kunigunde Lothar Ludwig Manfred Margarete Mechthild Meinhard Norbert
Ortwin Ottilie Rainer Reinhard Reinhold Rüdiger Siegfried Sieglinde Sigrun Steffen Stefanie Swen
Thorsten Ulrich Ulrike Volker Waltraud Wendelin Wolfgang Wilhelmina Wiebke Wilfried
"""

_SLAVIC_BALKAN_BALTIC = """
Agata Agnieszka Aleksander Alicja Aniela Bartłomiej Bartosz Bogdan Bogumił Bogusław Bożena
Bronisław Czesław Danuta Dobrosław Dorota Edyta Elżbieta Grażyna Grzegorz Halina Henryk Hieronim
Iwona Jadwiga Jarosław Jerzy Joanna Jolanta Kazimierz Kinga Krystyna Krzysztof Leszek Łucja
Łukasz Maciej Małgorzata Marek Mariusz Mieczysław Mirosław Przemysław Radosław Rościsław Ryszard
Sławomir Stanisław Stefania Szymon Tadeusz Teodor Urszula Wacław Wanda Wiesław Witold Władysław
Wojciech Zbigniew Zdzisław Zofia Zuzanna Bohumil Bohuslav Božena Dagmar Drahomíra Jaromír
Jaroslav Jiří Jitka Ladislav Libuše Lubomír Ludmila Miloš Miroslav Naděžda Oldřich Ondřej
Přemysl Radek Radim Radomír Šárka Stanislav Svatopluk Václav Věra Vladimír Vlasta Vojtěch Zdeněk
Zdeňka Ľubomír Ľudmila Jozef Jožef Juraj Matej Anđela Ankica Biljana Borna Borislav
Božidar Branka Branko Danica Darko Davor Dejan Dragan Dragana Dragica Dubravka Đorđe Dušan
Dušanka Goran Gordana Hrvoje Ivana Ivica Jadranka Jasna Jelena Jovan Jovana Katarina Krešimir
Ljiljana Ljubica Marija Marko Milena Milica Miljenko Milorad Miodrag Mirjana Mladen Nebojša
Nenad Nevenka Nikola Predrag Radmila Ranko Siniša Slavica Slobodan Snežana Stanko Stjepan Stojan
Svetlana Tihomir Tomislav Vesna Vinka Vehbija Vidica Višeslav Vladimir Vlatko Zdravko Željko
Zlatko Zoran Zorica Zvonimir Adnan Alija Amra Edin Emir Enes Esad Haris Kemal Mersiha Mirza
Nedim Refik Samir Sead Selma Senad Aleš Anže Blaž Boštjan Gašper Jure Matjaž Mojca Nataša Primož
Špela Tadej Urška Uroš Žiga Andris Aivars Baiba Dace Gunta Ilze Inese Jānis Kārlis Laima Māris
Zane Agnė Algirdas Audronė Birutė Dalia Egidijus Gintaras Jurgita Laimutė Mindaugas Rūta Saulius
Vytautas Aleksei Alyona Anatoly Arkady Boris Dmitri Dmitry Efim Efimiya Evgeni Evgenia Fyodor
Galina Gennady Grigory Igor Ilya Inna Irina Kirill Ksenia Larisa Leonid Leonti Lyudmila Maksim
Marina Mikhail Nadezhda Nikita Oksana Olga Pavel Polina Raisa Rostislav Ruslan Sergei Sergey
Taras Tatiana Tatyana Timofei Vadim Valentina Valery Vasily Vera Viktor Vitaly Vladislav
Yaroslav Yekaterina Yelena Yevgeny Yulia Yuri Zinaida Zoya Bohdan Mykola Mykhailo Oleksandr
Olena Petro Vasyl Volodymyr Yaroslava
"""

_SOUTHERN_WESTERN = """
Adelina Adolfo Agustín Albino Alejandra Alfonso Alicia Amparo Anselmo Aristóteles Armando
Arturo Aurelio Baltasar Bartolomé Begoña Benigno Bernardo Calixto Calquín Casimiro Catalina
Cayetano Celestino Clemente Consuelo Crisanto Damián Demetrio Desiderio Edelmira Efraín Eladio
Eliseo Eloy Emiliano Encarnación Epifanio Ernesto Esteban Eugenio Eulalia Eusebio Evaristo
Facundo Fausto Favian Feliciano Fermín Filomena Florencio Gaspar Genaro Gerardo Gertrudis
Gonzalo Graciela Gregorio Heriberto Higinio Hilario Homero Horacio Ignacio Inés Inmaculada
Isidro Jacinto Jimena Joaquín Julio Leocadia Leonor Leopoldo Lisandro Lorenzo Lucía Luciano
Macarena Marcelino Marcelo Marisol Maximiliano Modesto Nicanor Octavio Olegario Pascual Patricio
Paulino Plácido Porfirio Primitivo Rigoberto Rocío Rodrigo Rogelio Rosalía Rosendo Rufino
Saturnino Serafín Teodoro Tiburcio Timoteo Ulises Valentín Venancio Vicenta Wenceslao Ximena
Yolanda Zacarías Adão Antônio Caetano Conceição Eduarda Fabrício Gonçalo Jerônimo João Joaquim
Leonel Luís Matheus Sebastião Tânia Thiago Valdemar Vitória Vitoria Abelardo Amedeo Annunziata
Assunta Benedetta Bonifacio Brunilde Calogero Carmela Concetta Corrado Cosimo Crescenzo Dario
Donatella Egidio Elio Ermanno Ettore Fiorella Gaetano Gennaro Giacomo Gianluca Gianni Gioacchino
Giuliana Gualtiero Ilario Ippolito Lamberto Liliana Loredana Luigi Manlio Massimo Nunzio Ornella
Pasquale Pierluigi Raffaella Rosalba Sabatino Salvatore Saverio Settimio Tommaso Ubaldo Vincenzo
Vittorio Adrien Aurélie Bastien Benoît Céline Clément Delphine Églantine Émile Étienne Gaëlle
Gaspard Ghislaine Honoré Hélène Isaure Jérôme Josiane Lucien Maëlle Mathilde Maxime Mireille
Noël Océane Pinabel Solène Sylvain Théo Yannick Anastasia Aristidis Charalambos Efstathios
Kyriakos Leonidas Lambros Pantelis Sotiris Stamatis Aslı Berkay Cansu Ceren Doruk Ezgi Gökhan
İbrahim Oğuz Pınar Tolga Tuncay Volkan
"""

_HUNGARIAN_JAPANESE = """
Aladár Árpád Bence Bertalan Boglárka Dénes Dezső Emese Ernő Erzsébet Ferenc Gábor Géza Gizella
Gyula Gyöngyi Ilona Imre Irén Jenő Judit Kálmán Károly Kornélia Lőrinc Magdolna Margit Mátyás
Ödön Piroska Rezső Szabolcs Tódor Ubul Vilma Zsigmond Zsuzsa Akifumi Akihiro Akihiko Atsushi
Chihiro Eiji Fumiko Fumio Goro Hajime Hanako Haruki Hideo Hikaru Hiroki Hisashi Isamu Itsuki
Jiro Junichi Junko Kaede Kazuhiro Kazuya Keiichi Keisuke Kiyoshi Kyoko Mamoru Masaru Masashi
Michiko Mitsuru Nobuo Nobuyuki Reiko Ryuichi Sachiko Sayuri Setsuko Shigeru Shiro Shizuka Susumu
Tadashi Takahiro Takao Takehiko Teruo Tetsuya Tomohiro Toru Toshiko Tsutomu Yasuhiro Yasuko Yoko
Yoshiko Yoshio Yukiko Yuito Hyuuma Kenshin Sayaka Ayumi Emiko Kazumi
"""

WORLD_GIVEN_NAMES: frozenset[str] = frozenset(
    (_VARIANTS + _NORTHERN + _DUTCH_GERMAN + _SLAVIC_BALKAN_BALTIC + _SOUTHERN_WESTERN
     + _HUNGARIAN_JAPANESE).split()
)
